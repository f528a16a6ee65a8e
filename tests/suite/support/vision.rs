//! An in-process [`HermesServer`] with only the vision toolset, for the vision provider
//! suites: its provider choice, a PNG to analyze, and reading the result.

use std::io::Cursor;
use std::sync::atomic::{AtomicUsize, Ordering};

use hermes_mcp::hermes::{Context, Env, HermesConfig, HermesHome};
use hermes_mcp::server::{Availability, HermesServer, Progress, ToolOutput};
use hermes_mcp::toolsets::vision::VisionToolset;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// The server and the temp dir its Hermes home (and test images) live in.
pub struct H {
    pub dir: tempfile::TempDir,
    pub server: HermesServer,
}

/// A vision-only server on `yaml`, these variables and an optional `auth.json`.
pub fn mk(yaml: &str, env: &[(&str, &str)], auth: Option<Value>) -> H {
    let dir = tempfile::tempdir().unwrap();
    let home = HermesHome {
        path: dir.path().join("hermes"),
        explicit: true,
    };
    std::fs::create_dir_all(&home.path).unwrap();
    if let Some(a) = auth {
        std::fs::write(home.path.join("auth.json"), a.to_string()).unwrap();
    }
    let cfg = HermesConfig::from_yaml(yaml).expect("test config");
    let env = Env::from_map(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let ctx = Context::with_parts(home, env, cfg);
    let server = HermesServer::new(ctx, vec![Box::new(VisionToolset::default())]);
    H { dir, server }
}

impl H {
    /// (provider, why) that `tools`/`doctor` show for vision_analyze.
    pub fn choice(&self) -> (String, String) {
        let p = self.server.providers();
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].1.job, "vision_analyze");
        (p[0].1.provider.clone(), p[0].1.why.clone())
    }
    /// A 16×12 PNG written to a new file in the temp dir; its path.
    pub fn png(&self) -> String {
        let img = image::DynamicImage::new_rgb8(16, 12);
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = self
            .dir
            .path()
            .join(format!("x{}.png", N.fetch_add(1, Ordering::SeqCst)));
        std::fs::write(&p, out.into_inner()).unwrap();
        p.to_string_lossy().into_owned()
    }
    /// `vision_analyze` on a fresh [`H::png`], asking "what?".
    pub async fn analyze(&self) -> ToolOutput {
        self.ask(&self.png(), "what?").await
    }
    /// `vision_analyze` on `image_url` with `question`.
    pub async fn ask(&self, image_url: &str, question: &str) -> ToolOutput {
        let mut args = Map::new();
        args.insert("image_url".into(), json!(image_url));
        args.insert("question".into(), json!(question));
        self.server
            .call(
                "vision_analyze",
                Some(args),
                CancellationToken::new(),
                Progress::none(),
            )
            .await
    }
    /// Write `data` as `name` in the temp dir; its path.
    pub fn file(&self, name: &str, data: &[u8]) -> String {
        let p = self.dir.path().join(name);
        std::fs::write(&p, data).unwrap();
        p.display().to_string()
    }
    /// vision_analyze's availability as the server lists it.
    pub fn availability(&self) -> Availability {
        self.server
            .entries()
            .into_iter()
            .find(|(_, e)| e.spec.name == "vision_analyze")
            .unwrap()
            .1
            .availability
    }
}

/// The first text block of a tool result.
pub fn text(out: &ToolOutput) -> String {
    out.content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .expect("text content")
}

/// The fake's answer ("seen") came back as a successful analysis.
pub fn assert_seen(out: &ToolOutput) {
    assert!(!out.is_error, "{}", text(out));
    assert_eq!(
        out.first_json().unwrap(),
        json!({"success": true, "analysis": "seen"})
    );
}

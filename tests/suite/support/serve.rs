//! [`Serve`]: the one way the suite starts `hermes-mcp serve` over stdio — a hermetic
//! [`TestEnv`], an optional `config.yaml`, extra environment variables and an optional
//! private TMPDIR (so the processes a server starts, such as Chromium, are recognisable by
//! [`Served::marker`]) — ending in an initialized [`RawClient`]. Suites that need more
//! keep a thin wrapper on top of it.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::common::{RawClient, TestEnv, is_error, result_json};

/// How to start `hermes-mcp serve`: build it up, then [`Serve::client`] (in an env the
/// test owns) or [`Serve::start`] (in a new env, returned with the client).
#[derive(Default, Clone)]
pub struct Serve {
    config: Option<String>,
    vars: Vec<(String, String)>,
    private_tmp: bool,
}

impl Serve {
    pub fn new() -> Self {
        Self::default()
    }

    /// Write `yaml` (even an empty one) as `$HERMES_HOME/config.yaml` before starting.
    pub fn config(mut self, yaml: &str) -> Self {
        self.config = Some(yaml.to_string());
        self
    }

    /// Add one environment variable.
    pub fn var(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.vars.push((
            key.to_string(),
            value.as_ref().to_string_lossy().into_owned(),
        ));
        self
    }

    /// Add environment variables.
    pub fn vars(mut self, vars: &[(&str, &str)]) -> Self {
        for (k, v) in vars {
            self.vars.push((k.to_string(), v.to_string()));
        }
        self
    }

    /// Give the server its own TMPDIR under the env's directory (see [`Served::marker`]).
    pub fn private_tmp(mut self) -> Self {
        self.private_tmp = true;
        self
    }

    /// The `hermes-mcp` command this builds in `env` (config written, TMPDIR made), not
    /// yet spawned; [`RawClient::spawn`] adds `serve`.
    pub fn command(&self, env: &TestEnv) -> Command {
        if let Some(c) = &self.config {
            env.write_hermes("config.yaml", c);
        }
        let mut cmd = env.cmd();
        if self.private_tmp {
            let tmp = env.dir.path().join("tmp");
            std::fs::create_dir_all(&tmp).unwrap();
            cmd.env("TMPDIR", tmp);
        }
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// `hermes-mcp serve` in `env`, initialized.
    pub fn client(&self, env: &TestEnv) -> RawClient {
        let mut client = RawClient::spawn(self.command(env));
        client.initialize();
        client
    }

    /// `hermes-mcp serve` in a new [`TestEnv`], initialized.
    pub fn start(self) -> Served {
        let env = TestEnv::new();
        let client = self.client(&env);
        Served { env, client }
    }
}

/// A started server and the env it runs in.
pub struct Served {
    pub env: TestEnv,
    pub client: RawClient,
}

impl Served {
    /// The private TMPDIR, which every process the server starts has on its command line
    /// (Chromium's profile lives under it).
    pub fn marker(&self) -> String {
        self.env.dir.path().join("tmp").display().to_string()
    }

    /// The tool's result JSON and whether it was an error.
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let r = self.client.call_tool(tool, args);
        (is_error(&r), result_json(&r))
    }

    /// Call a tool that must succeed (`"success": true`).
    pub fn ok(&mut self, tool: &str, args: Value) -> Value {
        let (err, v) = self.call(tool, args.clone());
        assert!(
            !err && v["success"] == json!(true),
            "{tool} {args} failed: {v}"
        );
        v
    }

    /// Call a tool that must fail (`isError`, `"success": false`).
    pub fn fail(&mut self, tool: &str, args: Value) -> Value {
        let (err, v) = self.call(tool, args.clone());
        assert!(
            err && v["success"] == json!(false),
            "{tool} {args} should fail: {v}"
        );
        v
    }

    /// Close the server's stdin and wait (20 s at most) for it to exit.
    pub fn finish(self) {
        let Served { env: _env, client } = self;
        client.finish(Duration::from_secs(20));
    }
}

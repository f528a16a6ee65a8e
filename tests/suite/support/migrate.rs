//! Helpers for the `migrate` suites: the managed block's markers, running
//! `hermes-mcp migrate` and reading what it wrote, and [`CodexEnv`], an env where the
//! real codex can run next to it.

use std::fs;
use std::process::{Command, Output};

use super::common::{TestEnv, bin};
use super::prereq::codex_bin;

pub const START: &str =
    "# managed by hermes-agent — `hermes codex-runtime migrate` regenerates this section";
pub const END: &str = "# end hermes-agent managed section";

/// stdout of a run that must have succeeded ([`super::common::succeeded`]).
pub use super::common::succeeded as ok;

pub fn run(env: &TestEnv, args: &[&str]) -> Output {
    env.cmd()
        .arg("migrate")
        .args(args)
        .output()
        .expect("run hermes-mcp migrate")
}

pub fn config(env: &TestEnv) -> String {
    fs::read_to_string(env.codex_home().join("config.toml")).unwrap()
}

/// A [`TestEnv`] where codex can run (see [`TestEnv::under_cache`]).
pub struct CodexEnv(TestEnv);

impl std::ops::Deref for CodexEnv {
    type Target = TestEnv;
    fn deref(&self) -> &TestEnv {
        &self.0
    }
}

impl CodexEnv {
    pub fn new() -> Self {
        codex_bin();
        CodexEnv(TestEnv::under_cache("migrate-"))
    }
    pub fn codex(&self, args: &[&str]) -> Output {
        let mut c = Command::new("codex");
        self.apply(&mut c);
        c.args(args).output().expect("run codex")
    }
    /// `codex` of one release (see [`super::prereq::codex_of`]).
    pub fn codex_at(&self, codex: &std::path::Path, args: &[&str]) -> Output {
        let mut c = Command::new(codex);
        self.apply(&mut c);
        c.args(args).output().expect("run codex")
    }
    /// Each release of [`super::prereq::CODEX_VERSIONS`] loads config.toml with its strict
    /// loader (`codex app-server --strict-config --print-startup-config`).
    pub fn assert_every_codex_loads(&self) {
        for v in super::prereq::CODEX_VERSIONS {
            let codex = super::prereq::codex_of(v);
            let out = self.codex_at(
                &codex,
                &["app-server", "--strict-config", "--print-startup-config"],
            );
            assert!(
                out.status.success(),
                "codex {v} cannot load config.toml:\nstdout: {}\nstderr: {}\n---\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
                self.config()
            );
        }
    }
    pub fn migrate(&self, args: &[&str]) -> Output {
        let mut c = Command::new(bin());
        self.apply(&mut c);
        c.arg("migrate").args(args).output().expect("run migrate")
    }
    pub fn config(&self) -> String {
        fs::read_to_string(self.codex_home().join("config.toml")).unwrap()
    }
    pub fn write_config(&self, text: &str) {
        fs::write(self.codex_home().join("config.toml"), text).unwrap();
    }
}

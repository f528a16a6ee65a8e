use std::process::ExitCode;

fn main() -> ExitCode {
    // Internal: PDF bytes on stdin, extracted text on stdout (web_extract runs
    // it isolated). Kept out of clap so help and completions never offer it.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == "__pdf-text")
    {
        return hermes_mcp::toolsets::web::pdf::child_main();
    }
    let cli = hermes_mcp::cli::parse();
    match hermes_mcp::cli::run(cli) {
        Ok(code) => code,
        // A reader that went away (`hermes-mcp tools | head -c1`) ends us quietly,
        // as a program killed by SIGPIPE would be (Rust ignores SIGPIPE).
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "{}", hermes_mcp::error::render(&e));
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

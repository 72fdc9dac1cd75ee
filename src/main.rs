use hierad::cli::{closed_pipe, fail, parse, run};
use std::process::ExitCode;

// glibc malloc spent a quarter of the server's CPU growing and trimming
// its per-thread arenas under load (perf); mimalloc does not.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match run(cli) {
        Ok(code) => code,
        // `hierad config get … | head -1`: the reader has all it wanted.
        Err(err) if closed_pipe(&err) => ExitCode::SUCCESS,
        // Every command's failure is one line and exit status 1; 2 is
        // clap's, for a command line that does not parse.
        Err(err) => fail(&err),
    }
}

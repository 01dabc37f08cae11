//! `dp-erm`: fit, predict and privacy queries from the command line (see the crate's
//! library documentation and `dp-erm --help`).

fn main() {
    let cli: dp_erm_cli::Cli = dp_erm_cli::parse_or_exit();
    dp_erm_cli::exit_on_error(dp_erm_cli::run(cli.command));
}

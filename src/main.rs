fn main() -> std::process::ExitCode {
    scenario_run::cli::main()
}

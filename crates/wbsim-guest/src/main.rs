fn main() {
    std::process::exit(wbsim_guest::cli::main());
}

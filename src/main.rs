//! The `fibon-verify` binary: everything lives in the library; this only exits with the
//! code it returns.

fn main() {
    std::process::exit(fibon_verify::main_impl());
}

//! The `fibon-verify` binary: everything lives in the library; this only exits with the
//! code it returns.

/// mimalloc rather than the system allocator: `audit` allocates and frees per token and
/// per cell on every core, and glibc's malloc spent a fifth of its time there, more when
/// one thread frees what another allocated.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(fibon_verify::main_impl());
}

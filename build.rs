//! Names the target the binary is built for, so that `redlock --version` says which build a bug
//! report came from (`redlock 0.1.0 (aarch64-unknown-linux-musl)`): the x86_64 and aarch64 musl
//! builds, the packages made of them and a `cargo install` all print the same version otherwise.

fn main() {
    // Cargo sets TARGET for build scripts; it is the `--target` triple, or the host's.
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=BUILT_FOR_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}

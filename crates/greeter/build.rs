//! Compiles proto/helloworld.proto with protox (pure Rust, no protoc),
//! generates the tonic client and server with tonic-prost-build, and keeps
//! the descriptors (for clients that encode messages at run time).
use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/helloworld.proto");
    let descriptors = protox::compile(["proto/helloworld.proto"], ["proto"])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("helloworld.fds"), descriptors.encode_to_vec())?;
    tonic_prost_build::configure()
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}

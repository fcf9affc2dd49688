//! Compiles proto/helloworld.proto with protox (pure Rust, no protoc) and
//! generates the tonic client and server with tonic-prost-build.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/helloworld.proto");
    let descriptors = protox::compile(["proto/helloworld.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_transport(false)
        .compile_fds(descriptors)?;
    Ok(())
}

//! Generates the protobuf messages and the gRPC service from `proto/federated.proto`.
//! `protoc` comes from the `protoc-bin-vendored` crate, so a clean clone builds with
//! cargo alone (no system protoc needed).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_with_config(config, &["proto/federated.proto"], &["proto"])?;
    println!("cargo:rerun-if-changed=proto/federated.proto");
    Ok(())
}

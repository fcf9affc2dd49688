//! gRPC server reflection: the descriptors of a service, asked of the
//! server itself (`grpc.reflection.v1alpha`, the one every implementation
//! offers, then `v1`), with the files they import.
use crate::http2::h2_crate_client::H2Conn;
use http::Uri;
use prost::Message;
use prost_reflect::prost_types::FileDescriptorProto;
use prost_reflect::DescriptorPool;
use std::collections::BTreeMap;

/// A file's descriptors, or why the server gave none.
type Answer = Result<Vec<Vec<u8>>, String>;

/// Generates one reflection query per version of the protocol (the two
/// are the same messages under two packages).
macro_rules! query {
    ($name:ident, $pb:path) => {
        async fn $name(
            h2: &H2Conn,
            origin: &Uri,
            by_file: bool,
            name: &str,
        ) -> Result<Answer, tonic::Status> {
            use pb::server_reflection_request::MessageRequest;
            use pb::server_reflection_response::MessageResponse;
            use $pb as pb;
            let mut client = pb::server_reflection_client::ServerReflectionClient::with_origin(
                h2.service(),
                origin.clone(),
            );
            let request = match by_file {
                true => MessageRequest::FileByFilename(name.to_string()),
                false => MessageRequest::FileContainingSymbol(name.to_string()),
            };
            let request = pb::ServerReflectionRequest {
                host: String::new(),
                message_request: Some(request),
            };
            let mut answers = client
                .server_reflection_info(tokio_stream::once(request))
                .await?
                .into_inner();
            Ok(
                match answers.message().await?.and_then(|a| a.message_response) {
                    Some(MessageResponse::FileDescriptorResponse(files)) => {
                        Ok(files.file_descriptor_proto)
                    }
                    Some(MessageResponse::ErrorResponse(e)) => Err(e.error_message),
                    _ => Err("no descriptors in the answer".to_string()),
                },
            )
        }
    };
}

query!(query_v1alpha, tonic_reflection::pb::v1alpha);
query!(query_v1, tonic_reflection::pb::v1);

/// The descriptors of `service` and every file it imports, by reflection
/// over `h2`.
pub(crate) async fn service_pool(
    h2: &H2Conn,
    origin: &Uri,
    service: &str,
) -> Result<DescriptorPool, String> {
    let v1alpha = match query_v1alpha(h2, origin, false, service).await {
        Ok(answer) => Some(answer),
        Err(s) if s.code() == tonic::Code::Unimplemented => None,
        Err(s) => return Err(failed(&s)),
    };
    let use_v1alpha = v1alpha.is_some();
    let first = match v1alpha {
        Some(answer) => answer,
        None => query_v1(h2, origin, false, service)
            .await
            .map_err(|s| match s.code() {
                tonic::Code::Unimplemented => {
                    "the server offers no reflection: give the method's --proto FILE".to_string()
                }
                _ => failed(&s),
            })?,
    };
    let first = first.map_err(|e| format!("reflection does not know service {service}: {e}"))?;
    let mut files = BTreeMap::new();
    add(&mut files, first)?;
    // Servers send the file and usually its imports; ask for any missing,
    // a bounded number of times.
    for _ in 0..64 {
        let Some(missing) = missing(&files) else {
            break;
        };
        let answer = match use_v1alpha {
            true => query_v1alpha(h2, origin, true, &missing).await,
            false => query_v1(h2, origin, true, &missing).await,
        }
        .map_err(|s| failed(&s))?
        .map_err(|e| format!("reflection has no file {missing}: {e}"))?;
        add(&mut files, answer)?;
    }
    let mut pool = DescriptorPool::new();
    pool.add_file_descriptor_protos(files.into_values())
        .map_err(|e| format!("the server's descriptors do not fit together: {e}"))?;
    Ok(pool)
}

fn failed(status: &tonic::Status) -> String {
    format!(
        "reflection failed: gRPC {:?}: {}",
        status.code(),
        status.message()
    )
}

fn add(files: &mut BTreeMap<String, FileDescriptorProto>, raw: Vec<Vec<u8>>) -> Result<(), String> {
    for bytes in raw {
        let file = FileDescriptorProto::decode(bytes.as_slice())
            .map_err(|e| format!("reflection sent a bad descriptor: {e}"))?;
        files.insert(file.name().to_string(), file);
    }
    Ok(())
}

/// An imported file not yet known.
fn missing(files: &BTreeMap<String, FileDescriptorProto>) -> Option<String> {
    files
        .values()
        .flat_map(|f| f.dependency.iter())
        .find(|d| !files.contains_key(*d))
        .cloned()
}

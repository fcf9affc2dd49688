//! The request message of a gRPC call: JSON (`--data`) encoded as the
//! method's input message by its descriptor, framed for gRPC (a compressed
//! flag and a length). Encoded once when fixed; rendered and encoded per
//! call when the JSON holds `{seq}` or `{random:A..B}`.
use crate::template::Template;
use prost::Message;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The framed request message of every call.
#[derive(Clone, Debug)]
pub(crate) struct GrpcMessage {
    fixed: Option<Arc<[u8]>>,
    template: Template,
    input: MessageDescriptor,
    seq: Arc<AtomicU64>,
}

impl GrpcMessage {
    /// The message `json` describes, for `input`. A JSON that does not
    /// fit the message (an unknown field, a wrong type) is refused here,
    /// rendered once with its placeholders filled.
    pub(crate) fn new(input: MessageDescriptor, json: &str) -> Result<GrpcMessage, String> {
        let template = Template::parse(json.as_bytes()).map_err(|e| format!("--data: {e}"))?;
        let sample = encode(&input, &template.rendered(0))?;
        Ok(GrpcMessage {
            fixed: template.is_fixed().then(|| sample.into()),
            template,
            input,
            seq: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The next call's framed message.
    pub(crate) fn next(&self) -> Result<Arc<[u8]>, String> {
        match &self.fixed {
            Some(fixed) => Ok(Arc::clone(fixed)),
            None => {
                let seq = self.seq.fetch_add(1, Ordering::Relaxed);
                encode(&self.input, &self.template.rendered(seq)).map(Into::into)
            }
        }
    }
}

/// `json` as a framed `input` message.
fn encode(input: &MessageDescriptor, json: &[u8]) -> Result<Vec<u8>, String> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let message = DynamicMessage::deserialize(input.clone(), &mut de)
        .and_then(|m| de.end().map(|()| m))
        .map_err(|e| format!("--data does not fit {}: {e}", input.full_name()))?;
    let len = message.encoded_len();
    let len32 = u32::try_from(len).map_err(|_| "--data: message over 4 GiB".to_string())?;
    let mut framed = Vec::with_capacity(5 + len);
    framed.push(0);
    framed.extend_from_slice(&len32.to_be_bytes());
    message
        .encode(&mut framed)
        .map_err(|e| format!("--data: {e}"))?;
    Ok(framed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::schema::greeter_pool;

    fn hello() -> MessageDescriptor {
        greeter_pool()
            .get_message_by_name("helloworld.HelloRequest")
            .unwrap()
    }

    #[test]
    fn a_fixed_message_is_framed_once() {
        let m = GrpcMessage::new(hello(), r#"{"name": "ann"}"#).unwrap();
        let a = m.next().unwrap();
        assert_eq!(&a[..], &[0, 0, 0, 0, 5, 0x0a, 3, b'a', b'n', b'n']);
        assert!(Arc::ptr_eq(&a, &m.next().unwrap()));
    }

    #[test]
    fn placeholders_render_per_call() {
        let m = GrpcMessage::new(hello(), r#"{"name": "u{seq}"}"#).unwrap();
        assert_eq!(&m.next().unwrap()[7..], b"u0");
        assert_eq!(&m.next().unwrap()[7..], b"u1");
    }

    #[test]
    fn json_that_does_not_fit_the_message_is_refused() {
        for bad in [
            r#"{"nom": "x"}"#,
            r#"{"name": 3}"#,
            "{",
            r#"{"name":"a"} x"#,
        ] {
            let e = GrpcMessage::new(hello(), bad).unwrap_err();
            assert!(e.contains("helloworld.HelloRequest"), "{bad}: {e}");
        }
    }
}

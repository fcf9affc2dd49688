//! Entry points for fuzzing the readers of untrusted bytes (`fuzz/`):
//! each takes any bytes and must return, never panic.
use crate::http2::frame::{self as f, Head};

/// An HTTP/1.1 answer head.
pub fn http1_head(data: &[u8]) {
    let _ = crate::http1::wire::parse_head(data);
}

/// HTTP/2 frames after the server's SETTINGS, HPACK blocks included.
pub fn http2_frames(data: &[u8]) {
    let mut reader = crate::http2::frame_events::FrameReader::new();
    let mut out = Vec::new();
    let settings = [0, 0, 0, f::SETTINGS, 0, 0, 0, 0, 0];
    let mut bytes = settings.to_vec();
    bytes.extend_from_slice(data);
    let mut pos = 0;
    while pos + f::HEAD <= bytes.len() {
        let head = Head::parse(&bytes[pos..]);
        if reader.check(&head).is_err() || pos + f::HEAD + head.len > bytes.len() {
            return;
        }
        let payload = &bytes[pos + f::HEAD..pos + f::HEAD + head.len];
        if reader.frame(&head, payload, &mut out).is_err() {
            return;
        }
        pos += f::HEAD + head.len;
    }
}

/// PostgreSQL backend messages.
pub fn postgres_messages(data: &[u8]) {
    crate::postgres::wire::read_any(data);
}

/// Redis replies (RESP2 and RESP3).
pub fn redis_replies(data: &[u8]) {
    crate::redis::resp::read_any(data);
}

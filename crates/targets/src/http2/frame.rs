//! HTTP/2 frames (RFC 9113) as the lean client writes and reads them:
//! frame headers, the few control frames a client sends, and the request
//! header block, encoded once per target. HPACK is `httlib_hpack`'s.
use httlib_hpack::Encoder;

/// What a client sends first on every HTTP/2 connection.
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Frame header length.
pub(crate) const HEAD: usize = 9;
/// The largest frame payload a peer may send before SETTINGS say otherwise
/// (this client never raises it).
pub(crate) const MAX_FRAME: usize = 16_384;
/// The largest flow-control window (2^31 − 1).
pub(crate) const MAX_WINDOW: u32 = (1 << 31) - 1;
/// The window every connection and stream starts with.
pub(crate) const INITIAL_WINDOW: u32 = 65_535;

pub(crate) const DATA: u8 = 0x0;
pub(crate) const HEADERS: u8 = 0x1;
pub(crate) const RST_STREAM: u8 = 0x3;
pub(crate) const SETTINGS: u8 = 0x4;
pub(crate) const PUSH_PROMISE: u8 = 0x5;
pub(crate) const PING: u8 = 0x6;
pub(crate) const GOAWAY: u8 = 0x7;
pub(crate) const WINDOW_UPDATE: u8 = 0x8;
pub(crate) const CONTINUATION: u8 = 0x9;

/// END_STREAM on DATA and HEADERS; ACK on SETTINGS and PING.
pub(crate) const END_STREAM: u8 = 0x1;
pub(crate) const ACK: u8 = 0x1;
pub(crate) const END_HEADERS: u8 = 0x4;
pub(crate) const PADDED: u8 = 0x8;
pub(crate) const PRIORITY: u8 = 0x20;

pub(crate) const SETTINGS_ENABLE_PUSH: u16 = 0x2;
pub(crate) const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
pub(crate) const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;
pub(crate) const SETTINGS_MAX_FRAME_SIZE: u16 = 0x5;

pub(crate) const PROTOCOL_ERROR: u32 = 0x1;
pub(crate) const REFUSED_STREAM: u32 = 0x7;
pub(crate) const CANCEL: u32 = 0x8;

/// A frame header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub len: usize,
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
}

impl Head {
    /// The header at the start of `b` (at least [`HEAD`] bytes).
    pub(crate) fn parse(b: &[u8]) -> Head {
        Head {
            len: (b[0] as usize) << 16 | (b[1] as usize) << 8 | b[2] as usize,
            kind: b[3],
            flags: b[4],
            stream: u32_at(&b[5..]) & MAX_WINDOW,
        }
    }
}

/// The big-endian u32 at the start of `b`.
pub(crate) fn u32_at(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Appends a frame header.
pub(crate) fn put_head(out: &mut Vec<u8>, len: usize, kind: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&[(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags]);
    out.extend_from_slice(&stream.to_be_bytes());
}

/// Appends a SETTINGS frame with `values`.
pub(crate) fn put_settings(out: &mut Vec<u8>, values: &[(u16, u32)]) {
    put_head(out, values.len() * 6, SETTINGS, 0, 0);
    for (id, value) in values {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
}

/// Appends a frame whose payload is one u32 (WINDOW_UPDATE, RST_STREAM).
pub(crate) fn put_u32_frame(out: &mut Vec<u8>, kind: u8, stream: u32, value: u32) {
    put_head(out, 4, kind, 0, stream);
    out.extend_from_slice(&value.to_be_bytes());
}

/// Appends a PING (or its ACK) carrying `payload`.
pub(crate) fn put_ping(out: &mut Vec<u8>, flags: u8, payload: &[u8; 8]) {
    put_head(out, 8, PING, flags, 0);
    out.extend_from_slice(payload);
}

/// The payload of a DATA or HEADERS frame without its padding (and, for
/// HEADERS, without its priority fields); `None` if they do not fit.
pub(crate) fn content<'a>(head: &Head, payload: &'a [u8]) -> Option<&'a [u8]> {
    let mut body = payload;
    let mut pad = 0;
    if head.flags & PADDED != 0 {
        pad = *body.first()? as usize;
        body = &body[1..];
    }
    if head.kind == HEADERS && head.flags & PRIORITY != 0 {
        body = body.get(5..)?;
    }
    body.get(..body.len().checked_sub(pad)?)
}

/// The header block of a request: the method and scheme from the static
/// table where it has them, the rest as literals the server does not index
/// (no encoder state, so a fixed request's block can be reused).
pub(crate) fn header_block(
    https: bool,
    method: &str,
    authority: &str,
    path: &[u8],
    headers: &[(&str, Vec<u8>)],
) -> Vec<u8> {
    let mut block = Vec::new();
    let mut encoder = Encoder::with_dynamic_size(0);
    let scheme = if https { 7 } else { 6 };
    let mut fields: Vec<httlib_hpack::EncoderInput> = vec![
        match method {
            "GET" => 2.into(),
            "POST" => 3.into(),
            other => (2, other.as_bytes().to_vec(), 0).into(),
        },
        scheme.into(),
        (4, path.to_vec(), 0).into(),
        (1, authority.as_bytes().to_vec(), 0).into(),
    ];
    for (name, value) in headers {
        fields.push((name.as_bytes().to_vec(), value.clone(), 0).into());
    }
    for field in fields {
        // Static indexes and literals: nothing here can fail.
        let _ = encoder.encode(field, &mut block);
    }
    block
}

#[cfg(test)]
mod tests {
    use super::*;
    use httlib_hpack::Decoder;

    #[test]
    fn get_block_decodes_to_the_request() {
        let get_block = |https, authority: &str, path: &str| {
            header_block(https, "GET", authority, path.as_bytes(), &[])
        };
        let block = get_block(false, "127.0.0.1:8080", &format!("/{}", "a".repeat(200)));
        let headers: Vec<(String, String)> = decode(block)
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect();
        assert_eq!(headers[0], (":method".into(), "GET".into()));
        assert_eq!(headers[1], (":scheme".into(), "http".into()));
        assert_eq!(
            headers[2],
            (":path".into(), format!("/{}", "a".repeat(200)))
        );
        assert_eq!(headers[3], (":authority".into(), "127.0.0.1:8080".into()));
        let root = decode(get_block(true, "h", "/"));
        assert_eq!(root[1].1, b"https");
        assert_eq!(root[2].1, b"/");
    }

    #[test]
    fn other_methods_and_headers_are_literals() {
        let fields = decode(header_block(
            false,
            "DELETE",
            "api:80",
            b"/x/1",
            &[("authorization", b"Bearer t".to_vec())],
        ));
        assert_eq!(fields[0], (b":method".to_vec(), b"DELETE".to_vec()));
        assert_eq!(fields[4], (b"authorization".to_vec(), b"Bearer t".to_vec()));
        let post = decode(header_block(true, "POST", "h", b"/", &[]));
        assert_eq!(post[0].1, b"POST");
    }

    fn decode(mut block: Vec<u8>) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut fields = Vec::new();
        Decoder::default().decode(&mut block, &mut fields).unwrap();
        fields.into_iter().map(|(n, v, _)| (n, v)).collect()
    }

    #[test]
    fn heads_round_trip() {
        let mut out = Vec::new();
        put_head(&mut out, 70_000, HEADERS, END_STREAM | END_HEADERS, 12_345);
        let head = Head::parse(&out);
        assert_eq!(
            head,
            Head {
                len: 70_000,
                kind: HEADERS,
                flags: END_STREAM | END_HEADERS,
                stream: 12_345
            }
        );
    }

    #[test]
    fn padding_and_priority_are_stripped() {
        let head = Head {
            len: 0,
            kind: HEADERS,
            flags: PADDED | PRIORITY,
            stream: 1,
        };
        let payload = [2, 0, 0, 0, 0, 9, b'x', b'y', 0, 0];
        assert_eq!(content(&head, &payload), Some(&b"xy"[..]));
        let data = Head { kind: DATA, ..head };
        assert_eq!(content(&data, &[9, 1]), None);
        assert_eq!(content(&data, &[1, 7, 0]), Some(&[7][..]));
    }
}

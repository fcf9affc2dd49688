//! Reading HTTP/2 frames for the lean client: each frame becomes an event
//! for a request, an answer to a control frame, or a connection error.
use crate::http2::frame::{self as f, Head};
use crate::http2::hpack::Hpack;
use crate::RequestError;

/// What a read of frames means for the requests.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// A header block: the status (0 if none, e.g. trailers), and END_STREAM.
    Headers(u32, u16, bool),
    /// A header block (gRPC's trailers, or a trailers-only answer) carried
    /// `grpc-status` with this code, and `grpc-message`.
    Grpc(u32, u16, String),
    /// DATA of this many bytes, and END_STREAM.
    Data(u32, usize, bool),
    /// RST_STREAM with this error code.
    Reset(u32, u32),
    /// GOAWAY: the last stream id the server processes, its error code.
    GoAway(u32, u32),
    /// WINDOW_UPDATE: the stream (0: the connection) may be sent this many
    /// more bytes of DATA.
    Window(u32, u32),
    /// SETTINGS_INITIAL_WINDOW_SIZE: every stream's send window starts here.
    InitialWindow(u32),
    /// SETTINGS_MAX_FRAME_SIZE: the largest DATA frame the server takes.
    MaxFrame(u32),
}

/// Frame parsing state: HPACK's dynamic table, a header block continued
/// over frames, the connection window consumed.
#[derive(Default)]
pub(crate) struct FrameReader {
    hpack: Hpack,
    block: Vec<u8>,
    /// The stream (and END_STREAM) of a header block awaiting CONTINUATION.
    continued: Option<(u32, bool)>,
    pub settings_seen: bool,
    /// The server's PING answer came.
    pub pong: bool,
    /// SETTINGS_MAX_CONCURRENT_STREAMS, when a SETTINGS frame set it.
    pub streams: Option<usize>,
    /// DATA bytes received since the last connection WINDOW_UPDATE.
    consumed: u32,
    pub events: Vec<Event>,
}

impl FrameReader {
    pub(crate) fn new() -> Self {
        FrameReader::default()
    }

    /// A frame header the connection cannot accept.
    pub(crate) fn check(&self, head: &Head) -> Result<(), RequestError> {
        if !self.settings_seen && (head.kind != f::SETTINGS || head.flags & f::ACK != 0) {
            return Err(RequestError::protocol("the first frame was not SETTINGS"));
        }
        if head.len > f::MAX_FRAME {
            return Err(RequestError::protocol(format!(
                "HTTP/2 frame of {} bytes, above the {} allowed",
                head.len,
                f::MAX_FRAME
            )));
        }
        Ok(())
    }

    /// Handles one frame; answers to control frames go to `out`.
    pub(crate) fn frame(
        &mut self,
        head: &Head,
        payload: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), RequestError> {
        let id = head.stream;
        let end = head.flags & f::END_STREAM != 0;
        if let Some((cont, end)) = self.continued {
            return self.continuation(head, payload, cont, end);
        }
        match head.kind {
            f::DATA => {
                let body = f::content(head, payload).ok_or_else(bad_padding)?;
                self.consumed = self.consumed.saturating_add(head.len as u32);
                self.events.push(Event::Data(id, body.len(), end));
            }
            f::HEADERS => {
                let fragment = f::content(head, payload).ok_or_else(bad_padding)?;
                self.block.clear();
                self.block.extend_from_slice(fragment);
                if head.flags & f::END_HEADERS != 0 {
                    self.header_block(id, end)?;
                } else {
                    self.continued = Some((id, end));
                }
            }
            f::RST_STREAM if payload.len() == 4 => {
                self.events.push(Event::Reset(id, f::u32_at(payload)));
            }
            f::SETTINGS if head.flags & f::ACK != 0 => {}
            f::SETTINGS if payload.chunks_exact(6).remainder().is_empty() => {
                self.settings(payload, out);
            }
            f::PING if payload.len() == 8 => self.ping(head, payload, out),
            f::GOAWAY if payload.len() >= 8 => {
                let last = f::u32_at(payload) & f::MAX_WINDOW;
                let code = f::u32_at(&payload[4..]);
                self.events.push(Event::GoAway(last, code));
            }
            f::RST_STREAM | f::SETTINGS | f::PING | f::GOAWAY => {
                return Err(RequestError::protocol(format!(
                    "HTTP/2 frame of type {} with a bad length ({})",
                    head.kind, head.len
                )));
            }
            f::PUSH_PROMISE | f::CONTINUATION => {
                return Err(RequestError::protocol(format!(
                    "unexpected HTTP/2 frame of type {} (error {})",
                    head.kind,
                    f::PROTOCOL_ERROR
                )));
            }
            f::WINDOW_UPDATE if payload.len() == 4 => {
                let increment = f::u32_at(payload) & f::MAX_WINDOW;
                self.events.push(Event::Window(id, increment));
            }
            // PRIORITY, unknown.
            _ => {}
        }
        Ok(())
    }

    /// The rest of a header block, which nothing may interrupt.
    #[inline]
    fn continuation(
        &mut self,
        head: &Head,
        payload: &[u8],
        cont: u32,
        end: bool,
    ) -> Result<(), RequestError> {
        if head.kind != f::CONTINUATION || head.stream != cont {
            return Err(RequestError::protocol("HTTP/2 header block interrupted"));
        }
        self.block.extend_from_slice(payload);
        if head.flags & f::END_HEADERS != 0 {
            self.continued = None;
            self.header_block(head.stream, end)?;
        }
        Ok(())
    }

    /// The server's SETTINGS: the limits the connection keeps, and the ACK.
    fn settings(&mut self, payload: &[u8], out: &mut Vec<u8>) {
        for entry in payload.chunks(6) {
            let key = u16::from_be_bytes([entry[0], entry[1]]);
            let value = f::u32_at(&entry[2..]) as usize;
            if key == f::SETTINGS_MAX_CONCURRENT_STREAMS {
                self.streams = Some(value);
            } else if key == f::SETTINGS_INITIAL_WINDOW_SIZE {
                self.events.push(Event::InitialWindow(value as u32));
            } else if key == f::SETTINGS_MAX_FRAME_SIZE {
                self.events.push(Event::MaxFrame(value as u32));
            }
        }
        f::put_head(out, 0, f::SETTINGS, f::ACK, 0);
        self.settings_seen = true;
    }

    /// A PING answered, or the answer to ours.
    fn ping(&mut self, head: &Head, payload: &[u8], out: &mut Vec<u8>) {
        if head.flags & f::ACK != 0 {
            self.pong = true;
        } else {
            let mut data = [0; 8];
            data.copy_from_slice(payload);
            f::put_ping(out, f::ACK, &data);
        }
    }

    /// Decodes a whole header block (every block, to keep HPACK's table in
    /// step) and records its status.
    fn header_block(&mut self, id: u32, end: bool) -> Result<(), RequestError> {
        let fields = self.hpack.decode(&self.block)?;
        if let Some((code, message)) = fields.grpc {
            let message = String::from_utf8_lossy(&message).into_owned();
            self.events.push(Event::Grpc(id, code, message));
        }
        self.events.push(Event::Headers(id, fields.status, end));
        Ok(())
    }

    /// Gives the connection window back once half of it is used.
    pub(crate) fn replenish(&mut self, out: &mut Vec<u8>) {
        if self.consumed >= f::MAX_WINDOW / 2 {
            f::put_u32_frame(out, f::WINDOW_UPDATE, 0, self.consumed);
            self.consumed = 0;
        }
    }
}

fn bad_padding() -> RequestError {
    RequestError::protocol("HTTP/2 frame padding longer than the frame")
}

#[cfg(test)]
mod tests {
    use super::*;
    use httlib_hpack::Encoder;

    /// Feeds `frames` (one byte string) to `reader`; the control frames it
    /// answered with.
    fn feed(reader: &mut FrameReader, frames: &[u8]) -> Result<Vec<u8>, RequestError> {
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < frames.len() {
            let head = Head::parse(&frames[pos..]);
            reader.check(&head)?;
            let payload = &frames[pos + f::HEAD..pos + f::HEAD + head.len];
            reader.frame(&head, payload, &mut out)?;
            pos += f::HEAD + head.len;
        }
        Ok(out)
    }

    /// Found by fuzzing (fuzz/, http2_frames): HEADERS frames on which
    /// httlib-hpack panicked (an overflowing integer; an index out of
    /// bounds). Each must end as an error, not a panic.
    #[test]
    fn hpack_blocks_that_panicked_the_decoder_are_errors() {
        let crashes: [&[u8]; 2] = [
            &[
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x01, 0xc4,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x00, 0xff, 0xff, 0xff, 0x00,
                0x00, 0xff, 0xb4, 0x7a, 0x4f,
            ],
            &[
                0x00, 0x00, 0x02, 0x01, 0xde, 0x02, 0x00, 0x0d, 0xff, 0x00, 0x08, 0x00, 0x00, 0x00,
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x3a, 0xff, 0x00, 0x8f, 0x4f, 0x24,
                0x6f,
            ],
        ];
        for crash in crashes {
            let mut reader = ready();
            let mut out = Vec::new();
            let mut pos = 0;
            while pos + f::HEAD <= crash.len() {
                let head = Head::parse(&crash[pos..]);
                let end = (pos + f::HEAD + head.len).min(crash.len());
                if reader.check(&head).is_err()
                    || reader
                        .frame(&head, &crash[pos + f::HEAD..end], &mut out)
                        .is_err()
                {
                    break;
                }
                pos += f::HEAD + head.len;
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 512,
            rng_seed: proptest::test_runner::RngSeed::Fixed(13),
            failure_persistence: None,
            ..Default::default()
        })]

        /// After the server's SETTINGS, any frames (any type, flags,
        /// stream, payload; HEADERS and CONTINUATION with arbitrary HPACK)
        /// are read or refused with an error, never a panic.
        #[test]
        fn any_frames_are_read_without_a_panic(
            frames in proptest::collection::vec(
                (0u8..12, proptest::num::u8::ANY, 0u32..8, proptest::collection::vec(proptest::num::u8::ANY, 0..64)),
                0..16,
            )
        ) {
            let mut reader = ready();
            let mut out = Vec::new();
            for (kind, flags, stream, payload) in frames {
                let bytes = frame(kind, flags, stream, &payload);
                let head = Head::parse(&bytes);
                if reader.check(&head).is_err() {
                    break;
                }
                if reader.frame(&head, &bytes[f::HEAD..], &mut out).is_err() {
                    break;
                }
            }
        }
    }

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        f::put_head(&mut out, payload.len(), kind, flags, stream);
        out.extend_from_slice(payload);
        out
    }

    /// A reader past the server's first SETTINGS.
    fn ready() -> FrameReader {
        let mut reader = FrameReader::new();
        let mut settings = Vec::new();
        f::put_settings(&mut settings, &[(f::SETTINGS_MAX_CONCURRENT_STREAMS, 10)]);
        let answer = feed(&mut reader, &settings).unwrap();
        assert_eq!(answer, frame(f::SETTINGS, f::ACK, 0, &[]));
        assert_eq!(reader.streams, Some(10));
        reader
    }

    #[test]
    fn the_first_frame_must_be_settings() {
        let mut reader = FrameReader::new();
        let err = feed(&mut reader, b"HTTP/1.1 400 Bad Request\r\n\r\n").unwrap_err();
        assert!(err.message.contains("not SETTINGS"), "{}", err.message);
        assert!(!reader.settings_seen);
    }

    #[test]
    fn pings_are_answered_and_pongs_noted() {
        let mut reader = ready();
        let answer = feed(&mut reader, &frame(f::PING, 0, 0, b"12345678")).unwrap();
        assert_eq!(answer, frame(f::PING, f::ACK, 0, b"12345678"));
        assert!(!reader.pong);
        feed(&mut reader, &frame(f::PING, f::ACK, 0, b"poolbnch")).unwrap();
        assert!(reader.pong);
    }

    #[test]
    fn header_blocks_keep_hpack_state_across_frames_and_continuations() {
        let mut reader = ready();
        // `:status 201` indexed into the dynamic table (entry 62), split
        // over HEADERS and CONTINUATION.
        let mut block = Vec::new();
        let field = (
            8,
            b"201".to_vec(),
            Encoder::WITH_INDEXING | Encoder::HUFFMAN_VALUE,
        );
        Encoder::default().encode(field, &mut block).unwrap();
        let (first, rest) = block.split_at(2);
        let mut frames = frame(f::HEADERS, 0, 1, first);
        frames.extend(frame(f::CONTINUATION, f::END_HEADERS, 1, rest));
        // The next answer refers to the entry by index only.
        frames.extend(frame(
            f::HEADERS,
            f::END_HEADERS | f::END_STREAM,
            3,
            &[0x80 | 62],
        ));
        feed(&mut reader, &frames).unwrap();
        assert_eq!(
            reader.events,
            [Event::Headers(1, 201, false), Event::Headers(3, 201, true)]
        );
        let mut interrupted = frame(f::HEADERS, 0, 5, first);
        interrupted.extend(frame(f::DATA, 0, 5, b"x"));
        assert!(feed(&mut reader, &interrupted).is_err());
    }

    #[test]
    fn padded_data_counts_its_content_and_the_window_its_length() {
        let mut reader = ready();
        let padded = frame(
            f::DATA,
            f::PADDED | f::END_STREAM,
            1,
            &[3, b'o', b'k', 0, 0, 0],
        );
        feed(&mut reader, &padded).unwrap();
        assert_eq!(reader.events, [Event::Data(1, 2, true)]);
        assert_eq!(reader.consumed, 6);
        reader.consumed = f::MAX_WINDOW / 2;
        let mut out = Vec::new();
        reader.replenish(&mut out);
        let mut update = Vec::new();
        f::put_u32_frame(&mut update, f::WINDOW_UPDATE, 0, f::MAX_WINDOW / 2);
        assert_eq!(out, update);
    }

    #[test]
    fn resets_and_goaway_become_events() {
        let mut reader = ready();
        let mut frames = Vec::new();
        f::put_u32_frame(&mut frames, f::RST_STREAM, 7, f::REFUSED_STREAM);
        frames.extend(frame(f::GOAWAY, 0, 0, &[0, 0, 0, 5, 0, 0, 0, 0]));
        feed(&mut reader, &frames).unwrap();
        assert_eq!(
            reader.events,
            [Event::Reset(7, f::REFUSED_STREAM), Event::GoAway(5, 0)]
        );
        assert!(feed(&mut reader, &frame(f::PUSH_PROMISE, 0, 1, &[0; 4])).is_err());
        assert!(feed(&mut reader, &frame(f::PING, 0, 0, b"short")).is_err());
    }
}

//! HPACK (RFC 7541) for the lean client's answers: every header block goes
//! through the dynamic table, so later blocks index right, but only what an
//! answer is counted by (`:status`, `grpc-status`, `grpc-message`) is kept.
//! A server sends the same block again and again (nginx's changes with its
//! `date`, once a second): a block equal to one of the last two is not
//! decoded again when that gives the same fields and table. Table entries
//! are shared, not copied, so replaying a block's insertions allocates
//! nothing.
use crate::RequestError;
use httlib_hpack::table::Table;
use httlib_hpack::DecoderSpeed;
use std::collections::VecDeque;
use std::sync::Arc;

/// The table size this client allows (SETTINGS_HEADER_TABLE_SIZE, left at
/// its default).
const MAX_TABLE: usize = 4096;
/// Entries in the static table (indices 1 to 61).
const STATIC_LEN: usize = 61;
/// Blocks remembered: an answer's headers and its trailers (gRPC).
const REMEMBERED: usize = 2;

type Entry = (Arc<[u8]>, Arc<[u8]>);

/// What an answer is counted by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Fields {
    /// `:status` (0 when absent or not a number).
    pub(crate) status: u16,
    /// `grpc-status` (`u16::MAX` when not a number) and `grpc-message`.
    pub(crate) grpc: Option<(u16, Vec<u8>)>,
}

impl Fields {
    /// The first of each field counts, as a lookup by name would find it.
    fn see(&mut self, name: &[u8], value: &[u8], seen: &mut [bool; 3]) {
        let number = || std::str::from_utf8(value).ok()?.parse::<u16>().ok();
        match name {
            b":status" if !seen[0] => {
                seen[0] = true;
                self.status = number().unwrap_or(0);
            }
            b"grpc-status" if !seen[1] => {
                seen[1] = true;
                let message = self.grpc.take().map(|(_, m)| m).unwrap_or_default();
                self.grpc = Some((number().unwrap_or(u16::MAX), message));
            }
            b"grpc-message" if !seen[2] => {
                seen[2] = true;
                let code = self.grpc.as_ref().map_or(u16::MAX, |(c, _)| *c);
                self.grpc = Some((code, value.to_vec()));
            }
            _ => {}
        }
    }

    /// `grpc-message` seen without `grpc-status` is no gRPC outcome.
    fn finish(mut self, seen: &[bool; 3]) -> Fields {
        if !seen[1] {
            self.grpc = None;
        }
        self
    }
}

/// A decoded block kept for its next repeat.
struct Remembered {
    block: Vec<u8>,
    fields: Fields,
    /// The entries it inserted, in order.
    inserts: Vec<Entry>,
    /// It referred to dynamic entries: valid only while the table is as
    /// it left it (`version`).
    dynamic: bool,
    version: u64,
}

/// The decoder of one connection.
pub(crate) struct Hpack {
    statics: Table<'static>,
    /// Newest first.
    table: VecDeque<Entry>,
    size: usize,
    max_size: usize,
    /// Counts changes to the table.
    version: u64,
    remembered: Vec<Remembered>,
    next: usize,
}

impl Default for Hpack {
    fn default() -> Self {
        Hpack {
            statics: Table::with_dynamic_size(0),
            table: VecDeque::new(),
            size: 0,
            max_size: MAX_TABLE,
            version: 0,
            remembered: Vec::new(),
            next: 0,
        }
    }
}

fn invalid(what: &str) -> RequestError {
    RequestError::protocol(format!("HTTP/2 header block: {what}"))
}

impl Hpack {
    /// The fields of a whole header block.
    pub(crate) fn decode(&mut self, block: &[u8]) -> Result<Fields, RequestError> {
        if let Some(fields) = self.replay(block) {
            return Ok(fields);
        }
        let mut decoded = Decoded::default();
        let fields = self.decode_fresh(block, &mut decoded)?;
        if !decoded.resized {
            let kept = Remembered {
                block: block.to_vec(),
                fields: fields.clone(),
                inserts: decoded.inserts,
                dynamic: decoded.dynamic,
                version: self.version,
            };
            if self.remembered.len() < REMEMBERED {
                self.remembered.push(kept);
            } else {
                self.remembered[self.next] = kept;
                self.next = (self.next + 1) % REMEMBERED;
            }
        }
        Ok(fields)
    }

    /// A remembered block's fields, its insertions made again, when
    /// decoding `block` would give the same.
    fn replay(&mut self, block: &[u8]) -> Option<Fields> {
        let version = self.version;
        let i = self.remembered.iter().position(|r| {
            r.block == block && (!r.dynamic || (r.inserts.is_empty() && r.version == version))
        })?;
        let inserts = std::mem::take(&mut self.remembered[i].inserts);
        for e in &inserts {
            self.insert(e.clone());
        }
        let r = &mut self.remembered[i];
        r.inserts = inserts;
        r.version = self.version;
        Some(r.fields.clone())
    }

    fn decode_fresh(&mut self, block: &[u8], d: &mut Decoded) -> Result<Fields, RequestError> {
        let mut fields = Fields::default();
        let mut seen = [false; 3];
        let mut pos = 0;
        while let Some(&first) = block.get(pos) {
            if first & 0x80 != 0 {
                let index = integer(block, &mut pos, 7)?;
                let (name, value) = self.entry(index, d)?;
                fields.see(&name, &value, &mut seen);
            } else if first & 0x40 != 0 {
                let entry = self.literal(block, &mut pos, 6, d)?;
                fields.see(&entry.0, &entry.1, &mut seen);
                d.inserts.push(entry.clone());
                self.insert(entry);
            } else if first & 0x20 != 0 {
                let size = integer(block, &mut pos, 5)?;
                if size > MAX_TABLE {
                    return Err(invalid("table size above the allowed"));
                }
                self.max_size = size;
                self.evict();
                self.version += 1;
                d.resized = true;
            } else {
                let (name, value) = self.literal(block, &mut pos, 4, d)?;
                fields.see(&name, &value, &mut seen);
            }
        }
        Ok(fields.finish(&seen))
    }

    /// The entry at `index` (static, then dynamic).
    fn entry(&self, index: usize, d: &mut Decoded) -> Result<Entry, RequestError> {
        if index == 0 {
            return Err(invalid("index 0"));
        }
        if index <= STATIC_LEN {
            let (n, v) = self
                .statics
                .get(index as u32)
                .ok_or_else(|| invalid("bad static index"))?;
            return Ok((Arc::from(n), Arc::from(v)));
        }
        d.dynamic = true;
        self.table
            .get(index - STATIC_LEN - 1)
            .cloned()
            .ok_or_else(|| invalid("index beyond the table"))
    }

    /// A literal field: its name indexed (`prefix` bits) or a string, then
    /// its value.
    fn literal(
        &self,
        block: &[u8],
        pos: &mut usize,
        prefix: u8,
        d: &mut Decoded,
    ) -> Result<Entry, RequestError> {
        let index = integer(block, pos, prefix)?;
        let name = match index {
            0 => string(block, pos)?,
            i => self.entry(i, d)?.0,
        };
        Ok((name, string(block, pos)?))
    }

    fn insert(&mut self, entry: Entry) {
        self.size += entry.0.len() + entry.1.len() + 32;
        self.table.push_front(entry);
        self.evict();
        self.version += 1;
    }

    fn evict(&mut self) {
        while self.size > self.max_size {
            match self.table.pop_back() {
                Some((n, v)) => self.size -= n.len() + v.len() + 32,
                None => self.size = 0,
            }
        }
    }
}

/// What decoding one block did besides its fields.
#[derive(Default)]
struct Decoded {
    inserts: Vec<Entry>,
    /// It referred to the dynamic table.
    dynamic: bool,
    /// It changed the table's size.
    resized: bool,
}

/// An HPACK integer with a `prefix`-bit first octet (RFC 7541 5.1).
fn integer(block: &[u8], pos: &mut usize, prefix: u8) -> Result<usize, RequestError> {
    let max = (1usize << prefix) - 1;
    let first = usize::from(block[*pos]) & max;
    *pos += 1;
    if first < max {
        return Ok(first);
    }
    let mut value = max;
    for shift in (0..35).step_by(7) {
        let &b = block
            .get(*pos)
            .ok_or_else(|| invalid("integer cut short"))?;
        *pos += 1;
        value += usize::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(invalid("integer too large"))
}

/// An HPACK string (RFC 7541 5.2), Huffman-coded or not.
fn string(block: &[u8], pos: &mut usize) -> Result<Arc<[u8]>, RequestError> {
    let &first = block.get(*pos).ok_or_else(|| invalid("string missing"))?;
    let len = integer(block, pos, 7)?;
    let raw = block
        .get(*pos..pos.saturating_add(len))
        .ok_or_else(|| invalid("string beyond the block"))?;
    *pos += len;
    if first & 0x80 == 0 {
        return Ok(Arc::from(raw));
    }
    let mut out = Vec::with_capacity(len * 8 / 5 + 1);
    httlib_huffman::decode(raw, &mut out, DecoderSpeed::FiveBits)
        .map_err(|_| invalid("bad Huffman code"))?;
    Ok(Arc::from(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use httlib_hpack::{Encoder, EncoderInput};

    fn encode(enc: &mut Encoder, fields: &[(&str, &str, u8)]) -> Vec<u8> {
        let mut out = Vec::new();
        for &(n, v, flags) in fields {
            let input = EncoderInput::from((n.as_bytes().to_vec(), v.as_bytes().to_vec(), flags));
            enc.encode(input, &mut out).unwrap();
        }
        out
    }

    /// Blocks decoded fresh and replayed give what the reference decoder
    /// gives, with the table in step across indexed, inserted and
    /// repeated blocks.
    #[test]
    fn repeated_blocks_decode_as_the_reference_decoder_does() {
        let mut enc = Encoder::with_dynamic_size(4096);
        let mut reference = httlib_hpack::Decoder::with_dynamic_size(4096);
        let mut ours = Hpack::default();
        // As nginx: literals inserted, never referred to; as grpc-go:
        // inserted once, then referred to.
        let idx = Encoder::WITH_INDEXING | Encoder::HUFFMAN_VALUE;
        let best = idx | Encoder::BEST_FORMAT;
        let headers = [(":status", "200", idx), ("date", "Wed", idx)];
        let trailers = [("grpc-status", "0", best), ("grpc-message", "fine", best)];
        let mut blocks = Vec::new();
        for round in 0..6 {
            blocks.push(encode(&mut enc, &headers));
            blocks.push(encode(&mut enc, &trailers));
            if round == 3 {
                blocks.push(encode(&mut enc, &[(":status", "503", idx)]));
            }
        }
        for block in blocks {
            let mut fields = Vec::new();
            reference.decode(&mut block.clone(), &mut fields).unwrap();
            let got = ours.decode(&block).unwrap();
            let find = |name: &[u8]| fields.iter().find(|f| f.0 == name).map(|f| f.1.clone());
            let status =
                find(b":status").map_or(0, |s| String::from_utf8(s).unwrap().parse().unwrap());
            assert_eq!(got.status, status);
            let grpc = find(b"grpc-status").map(|c| {
                let code = String::from_utf8(c).unwrap().parse().unwrap();
                (code, find(b"grpc-message").unwrap_or_default())
            });
            assert_eq!(got.grpc, grpc);
        }
    }

    /// A block that inserts and refers to what it inserted is replayed
    /// only with the table it was decoded against.
    #[test]
    fn blocks_referring_to_their_own_insertions_are_decoded_again() {
        let mut ours = Hpack::default();
        // `:status: 200` inserted (literal, indexed name 8), then the
        // newest dynamic entry (62) referred to.
        let block = [0x48, 0x03, b'2', b'0', b'0', 0x80 | 62];
        assert_eq!(ours.decode(&block).unwrap().status, 200);
        assert_eq!(ours.decode(&block).unwrap().status, 200);
        assert_eq!(ours.table.len(), 2);
        // A block of only a dynamic reference replays while the table holds.
        let indexed = [0x80 | 63];
        assert_eq!(ours.decode(&indexed).unwrap().status, 200);
        assert_eq!(ours.decode(&indexed).unwrap().status, 200);
    }

    #[test]
    fn bad_blocks_are_errors() {
        for block in [
            &[0x80][..],
            &[0x80 | 70],
            &[0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
            &[0x3f, 0xff, 0x7f],
            &[0x00, 0x05, b'a'],
            &[0x00, 0x01, b'a'],
        ] {
            assert!(Hpack::default().decode(block).is_err(), "{block:?}");
        }
    }
}

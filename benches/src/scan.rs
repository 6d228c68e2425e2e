//! A hand-written validate-only scan of a MetadataResponse v13, the
//! practical ceiling the issue measures a validate-only pass against.
//!
//! It checks what a decoder must check (every length against the bytes left,
//! UTF-8 in strings, tagged-field sizes, no trailing bytes) for exactly this
//! one version, with no generality, no error detail and nothing built.

/// A cursor that fails with `None` on any fault.
struct Scan<'a> {
    input: &'a [u8],
}

impl<'a> Scan<'a> {
    #[inline(always)]
    fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        if len > self.input.len() {
            return None;
        }
        let (head, rest) = self.input.split_at(len);
        self.input = rest;
        Some(head)
    }

    #[inline(always)]
    fn skip(&mut self, len: usize) -> Option<()> {
        self.take(len).map(drop)
    }

    #[inline(always)]
    fn uvarint(&mut self) -> Option<u32> {
        let mut value = 0u32;
        for shift in (0..35).step_by(7) {
            let (&byte, rest) = self.input.split_first()?;
            self.input = rest;
            value |= u32::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Some(value);
            }
        }
        None
    }

    /// A compact length: `None` on a fault, `Some(None)` for null.
    #[inline(always)]
    fn compact_len(&mut self) -> Option<Option<usize>> {
        Some(self.uvarint()?.checked_sub(1).map(|len| len as usize))
    }

    #[inline(always)]
    fn string(&mut self, nullable: bool) -> Option<()> {
        match self.compact_len()? {
            None if nullable => Some(()),
            None => None,
            Some(len) => std::str::from_utf8(self.take(len)?).ok().map(drop),
        }
    }

    #[inline(always)]
    fn int32_array(&mut self) -> Option<()> {
        let count = self.compact_len()??;
        self.skip(count.checked_mul(4)?)
    }

    #[inline(always)]
    fn tagged_fields(&mut self) -> Option<()> {
        for _ in 0..self.uvarint()? {
            self.uvarint()?;
            let size = self.uvarint()? as usize;
            self.skip(size)?;
        }
        Some(())
    }

    #[inline(always)]
    fn array(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        let count = self.compact_len()??;
        if count > self.input.len() {
            return None;
        }
        for _ in 0..count {
            element(self)?;
        }
        Some(())
    }
}

/// True when `input` is exactly one well-formed MetadataResponse v13.
pub fn scan_metadata_response_v13(input: &[u8]) -> bool {
    let mut s = Scan { input };
    let valid = (|| {
        s.skip(4)?; // throttle_time_ms
        s.array(|s| {
            s.skip(4)?; // node_id
            s.string(false)?; // host
            s.skip(4)?; // port
            s.string(true)?; // rack
            s.tagged_fields()
        })?;
        s.string(true)?; // cluster_id
        s.skip(4)?; // controller_id
        s.array(|s| {
            s.skip(2)?; // error_code
            s.string(true)?; // name
            s.skip(16 + 1)?; // topic_id, is_internal
            s.array(|s| {
                s.skip(2 + 4 + 4 + 4)?; // error_code .. leader_epoch
                s.int32_array()?; // replica_nodes
                s.int32_array()?; // isr_nodes
                s.int32_array()?; // offline_replicas
                s.tagged_fields()
            })?;
            s.skip(4)?; // topic_authorized_operations
            s.tagged_fields()
        })?;
        s.skip(2)?; // error_code (v13)
        s.tagged_fields()
    })();
    valid.is_some() && s.input.is_empty()
}

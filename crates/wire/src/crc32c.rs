//! CRC-32C (Castagnoli), the checksum OP_MSG carries when `checksumPresent` is set.
//!
//! A table-driven software implementation, processing eight bytes per step
//! (slicing-by-8). The tables are computed at compile time.

const POLYNOMIAL_REFLECTED: u32 = 0x82f6_3b78;

const TABLES: [[u32; 256]; 8] = build_tables();

#[expect(
    clippy::indexing_slicing,
    reason = "compile-time loops bounded by the table sizes; a bad index fails the build"
)]
const fn build_tables() -> [[u32; 256]; 8] {
    let mut tables = [[0u32; 256]; 8];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = byte as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLYNOMIAL_REFLECTED
            } else {
                crc >> 1
            };
            bit += 1;
        }
        tables[0][byte] = crc;
        byte += 1;
    }
    let mut slice = 1;
    while slice < 8 {
        let mut byte = 0;
        while byte < 256 {
            let previous = tables[slice - 1][byte];
            tables[slice][byte] = (previous >> 8) ^ tables[0][(previous & 0xff) as usize];
            byte += 1;
        }
        slice += 1;
    }
    tables
}

/// The CRC-32C of `bytes`.
#[must_use]
#[expect(
    clippy::indexing_slicing,
    reason = "every table index is masked to 0..=255 and every table has 256 entries"
)]
pub fn crc32c(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let low = u32::from_le_bytes([word[0], word[1], word[2], word[3]]) ^ crc;
        let high = u32::from_le_bytes([word[4], word[5], word[6], word[7]]);
        crc = TABLES[7][(low & 0xff) as usize]
            ^ TABLES[6][((low >> 8) & 0xff) as usize]
            ^ TABLES[5][((low >> 16) & 0xff) as usize]
            ^ TABLES[4][(low >> 24) as usize]
            ^ TABLES[3][(high & 0xff) as usize]
            ^ TABLES[2][((high >> 8) & 0xff) as usize]
            ^ TABLES[1][((high >> 16) & 0xff) as usize]
            ^ TABLES[0][(high >> 24) as usize];
    }
    for &byte in chunks.remainder() {
        crc = (crc >> 8) ^ TABLES[0][((crc ^ u32::from(byte)) & 0xff) as usize];
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::crc32c;

    #[test]
    fn crc32c_matches_published_check_values() {
        // RFC 3720 (iSCSI) appendix B.4 test vectors and the standard "123456789" check.
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(&[0u8; 32]), 0x8a91_36aa);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62a8_ab43);
        let ascending: Vec<u8> = (0u8..32).collect();
        assert_eq!(crc32c(&ascending), 0x46dd_794e);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn crc32c_is_independent_of_chunking() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in 0..40 {
            let slow = data[..len].iter().fold(!0u32, |crc, &b| {
                (crc >> 8) ^ super::TABLES[0][((crc ^ u32::from(b)) & 0xff) as usize]
            });
            assert_eq!(crc32c(&data[..len]), !slow, "len {len}");
        }
    }
}

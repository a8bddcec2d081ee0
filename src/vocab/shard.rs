//! `--shard K/N`: which runner of N takes a cell of `run`, or a conversation of `audit`
//! and `sample` — a stable hash of its id, the same for every command.

use std::str::FromStr;

/// `--shard K/N`: this runner takes the cells whose id hashes to K-1 modulo N.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based index.
    pub index: u32,
    /// Number of shards.
    pub total: u32,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (k, n) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not K/N (such as 2/4)"))?;
        let (index, total): (u32, u32) = (
            k.trim()
                .parse()
                .map_err(|_| format!("`{k}` is not a number"))?,
            n.trim()
                .parse()
                .map_err(|_| format!("`{n}` is not a number"))?,
        );
        if total == 0 || index == 0 || index > total {
            return Err(format!("shard {index}/{total}: K must be between 1 and N"));
        }
        Ok(Shard { index, total })
    }
}

impl Shard {
    /// Whether a cell belongs to this shard: a stable hash (FNV-1a) of its id, so every
    /// runner agrees without talking to the others, and a cell stays in its shard as the
    /// matrix grows.
    pub fn takes(&self, id: &str) -> bool {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in id.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        h % u64::from(self.total) == u64::from(self.index - 1)
    }
}

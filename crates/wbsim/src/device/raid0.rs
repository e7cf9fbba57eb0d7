//! md RAID0 (`drivers/md/raid0.c`, one zone of equal members): the array
//! is bio-based, it has no request queue of its own. `raid0_make_request`
//! splits a bio at chunk boundaries and remaps each piece to
//! `member = chunk_no % N`, `sector = (chunk_no / N) * chunk + offset` on
//! that member; requests are built, plugged and merged in the members'
//! queues.

/// The striping of one array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raid0 {
    /// Member device indexes, in array order.
    pub members: Vec<usize>,
    pub chunk_sectors: u64,
}

impl Raid0 {
    /// Member and member sector of array sector `sector`, and how many
    /// sectors remain in its chunk.
    pub fn map(&self, sector: u64) -> (usize, u64, u64) {
        let chunk_no = sector / self.chunk_sectors;
        let offset = sector % self.chunk_sectors;
        let n = self.members.len() as u64;
        let member = self.members[(chunk_no % n) as usize];
        let member_sector = (chunk_no / n) * self.chunk_sectors + offset;
        (member, member_sector, self.chunk_sectors - offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_alternate_between_members() {
        let r = Raid0 {
            members: vec![3, 4],
            chunk_sectors: 1024,
        };
        assert_eq!(r.map(0), (3, 0, 1024));
        assert_eq!(r.map(1000), (3, 1000, 24));
        assert_eq!(r.map(1024), (4, 0, 1024));
        assert_eq!(r.map(2048 + 8), (3, 1024 + 8, 1016));
        assert_eq!(r.map(3 * 1024 + 5), (4, 1024 + 5, 1019));
    }
}

//! The guest side of `wbsim lab`: the contract with the host
//! ([`protocol`]) and the code that runs inside the QEMU guest.

pub mod protocol;

//! The guest side of `wbsim lab`: the contract with the host
//! ([`protocol`]) and the code that runs inside the QEMU guest: the
//! `/init` ([`init`]) and the workload programs ([`workloads`]) it runs
//! as child processes (`wbsim-guest task`).

pub mod cli;
pub mod init;
pub mod modules;
pub mod mounts;
pub mod plan;
pub mod protocol;
pub mod records;
pub mod sampler;
pub mod sys;
pub mod tasks;
pub mod trace;
pub mod workloads;

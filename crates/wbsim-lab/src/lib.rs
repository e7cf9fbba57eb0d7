//! `wbsim lab`: run a scenario's workload on a real Linux kernel under
//! QEMU and read back the same figures the simulator reports, so that the
//! two can be set side by side.
//!
//! Data flow: scenario → [`machine`] (guest memory, zones, CPUs, disk
//! throttle, mkfs) → [`initramfs`] (the guest binary, its plan, modules)
//! → [`qemu`] (boot, watch the console, wall-clock limit) → results disk
//! (records of `wbsim_guest::protocol`) → [`procfs`] and
//! [`guest_report`] (the records as a `wbsim::report::RunReport`) →
//! [`compare`] (real against simulated, figure by figure; [`held`] gives
//! the simulation the memory the guest's kernel held).

pub mod compare;
pub mod fuse_daemon;
pub mod guest_report;
pub mod held;
pub mod initramfs;
pub mod kernel_image;
pub mod machine;
pub mod plan;
pub mod procfs;
pub mod qemu;
pub mod run;
pub mod setup;

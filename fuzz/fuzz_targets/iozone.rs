#![no_main]

use libfuzzer_sys::fuzz_target;
use wbsim_fuzz::Target;

fuzz_target!(|data: &[u8]| {
    wbsim_fuzz::run(Target::Iozone, data);
});

//! `wbsim reproduce`: placeholder filled in below.
use std::path::Path;
pub fn cmd_reproduce(_id: Option<&str>, _runs: Option<u32>, _json: Option<&Path>) -> Result<(), String> {
    Ok(())
}

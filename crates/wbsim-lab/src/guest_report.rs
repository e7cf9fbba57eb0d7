//! The guest's records as a `wbsim::report::RunReport`.

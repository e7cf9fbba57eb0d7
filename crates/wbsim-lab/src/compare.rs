//! Real against simulated, figure by figure.

//! `scrub issue`: the whole triage of one bug report, one small module per step around the
//! core (which never imports them).

pub mod bisect;
pub mod check;
pub mod extract;
pub mod fetch;
pub mod judge;
pub mod reproduce;
pub mod safety;

//! The functions as Lambda runs them: sample events through each handler, and a function
//! binary against a Lambda Runtime API served here.

mod binary;
mod clips_events;
mod events;

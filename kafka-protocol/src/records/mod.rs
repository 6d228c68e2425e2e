//! Record batches.

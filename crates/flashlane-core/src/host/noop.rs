//! NOOP: first in, first out, no reordering.

use std::collections::VecDeque;

use super::{HostRequest, HostScheduler, HostView, RequestId};

#[derive(Debug, Default)]
pub struct Noop {
    queue: VecDeque<RequestId>,
}

impl HostScheduler for Noop {
    fn push(&mut self, request: HostRequest, _view: &HostView) {
        self.queue.push_back(request.id);
    }

    fn pop(&mut self, _view: &HostView, out: &mut Vec<RequestId>) {
        if let Some(id) = self.queue.pop_front() {
            out.push(id);
        }
    }

    fn complete(&mut self, _request: &HostRequest, _view: &HostView) {}

    fn len(&self) -> usize {
        self.queue.len()
    }
}

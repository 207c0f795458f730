#include "tlm/fabric_protocol.h"

#include <stdexcept>

namespace fabricsim {

namespace detail {
unsigned char g_message_mark;
unsigned char g_frame_mark;
}  // namespace detail

namespace {
// Free lists. The simulation is single-threaded; objects are made in blocks
// and never returned to the heap, so the hot path never allocates. The lists
// themselves are never destroyed either, so the pooled objects stay
// reachable to the end (a leak checker runs after static destructors). Every
// object made is listed too: one still in use when a run stops (a frame or
// ACK in flight after the last collective finished, a message waiting for
// an ACK) belongs to the pool, not to a leak.
std::vector<Message*>& g_free_messages = *new std::vector<Message*>();
std::vector<Frame*>& g_free_frames = *new std::vector<Frame*>();
std::vector<Message*>& g_all_messages = *new std::vector<Message*>();
std::vector<Frame*>& g_all_frames = *new std::vector<Frame*>();
std::vector<Frame*>& g_retired_frames = *new std::vector<Frame*>();
std::uint64_t g_next_message_id = 1;
}  // namespace

Message::Message() {
  set_command(tlm::TLM_WRITE_COMMAND);
  set_data_ptr(&detail::g_message_mark);
  set_data_length(0);
}

Message* Message::allocate() {
  Message* m;
  if (g_free_messages.empty()) {
    m = new Message();
    g_all_messages.push_back(m);
  } else {
    m = g_free_messages.back();
    g_free_messages.pop_back();
  }
  m->refs_ = 1;
  m->id = g_next_message_id++;
  return m;
}

void Message::reset() {
  src = dst = kNoAddress;
  bytes = 0;
  kind = MessageKind::kUnicast;
  hardware = false;
  protocol = CommProtocol::kPlain;
  flow = 0;
  queue = 0;
  notice = Notice::kNone;
  acked.clear();
  nic = NicProgress{};
  tag = Tags{};
  sender = Sender{};
  reduction = Reduction{};
  memory = MemoryAccess{};
  if (data.capacity() > (1u << 20)) {
    std::vector<std::uint8_t>().swap(data);
  } else {
    data.clear();
  }
}

void Message::unref() {
  if (refs_ <= 0) throw std::logic_error("message dropped more often than referenced");
  if (--refs_ == 0) {
    reset();
    g_free_messages.push_back(this);
  }
}

Frame::Frame() {
  set_command(tlm::TLM_WRITE_COMMAND);
  set_data_ptr(&detail::g_frame_mark);
  set_data_length(0);
}

Frame* Frame::allocate() {
  if (g_free_frames.empty()) {
    Frame* f = new Frame();
    g_all_frames.push_back(f);
    return f;
  }
  Frame* f = g_free_frames.back();
  g_free_frames.pop_back();
  // Reset here, not in release(): callers up the stack of a release may still
  // read the frame until the current event ends.
  f->msg = nullptr;
  f->src = f->dst = kNoAddress;
  f->offset = f->bytes = f->wire_bytes = 0;
  f->index = 0;
  f->last = false;
  f->request = false;
  f->flow = 0;
  f->entering_ring = false;
  f->ecn = false;
  f->holds_message = false;
  f->hop_in = 0;
  f->owner = nullptr;
  f->fetched = false;
  f->head = f->tail = f->spread = 0;
  return f;
}

void Frame::retire() {
  g_retired_frames.push_back(this);
}

bool Frame::any_retired() {
  return !g_retired_frames.empty();
}

void Frame::recycle_retired() {
  g_free_frames.insert(g_free_frames.end(), g_retired_frames.begin(), g_retired_frames.end());
  g_retired_frames.clear();
}

}  // namespace fabricsim

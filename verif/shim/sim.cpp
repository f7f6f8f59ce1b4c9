// The design-independent half of the shim: port table access and tracing.
#include "mrnic-verif/shim/sim.h"

namespace mrnic_verif {

static const char* kind_name(PortSlot::Kind k) {
    switch (k) {
        case PortSlot::C: return "CData (1..8 bits)";
        case PortSlot::S: return "SData (9..16 bits)";
        case PortSlot::I: return "IData (17..32 bits)";
        case PortSlot::Q: return "QData (33..64 bits)";
        default: return "VlWide (over 64 bits)";
    }
}

void Sim::add(const char* name, PortSlot::Kind kind, void* ptr, uint32_t width, bool input, uint32_t edata_words) {
    PortSlot::Kind want = width <= 8 ? PortSlot::C
                        : width <= 16 ? PortSlot::S
                        : width <= 32 ? PortSlot::I
                        : width <= 64 ? PortSlot::Q
                                      : PortSlot::W;
    if (width == 0 || kind != want || (kind == PortSlot::W && edata_words != (width + 31) / 32)) {
        throw std::runtime_error(std::string("port ") + name + ": the model says " + std::to_string(width) +
                                 " bits, but Verilator keeps it as " + kind_name(kind) +
                                 ": the model and the Verilog disagree on its width");
    }
    size_t idx = ports_.size();
    ports_.push_back(PortSlot{kind, input, width, (width + 63) / 64, ptr, name});
    (input ? inputs_ : outputs_).push_back(idx);
}

void Sim::write(const PortSlot& p, const uint64_t* w) {
    const uint64_t mask = p.width >= 64 ? ~uint64_t(0) : ((uint64_t(1) << p.width) - 1);
    switch (p.kind) {
        case PortSlot::C: *static_cast<CData*>(p.ptr) = static_cast<CData>(w[0] & mask); break;
        case PortSlot::S: *static_cast<SData*>(p.ptr) = static_cast<SData>(w[0] & mask); break;
        case PortSlot::I: *static_cast<IData*>(p.ptr) = static_cast<IData>(w[0] & mask); break;
        case PortSlot::Q: *static_cast<QData*>(p.ptr) = w[0] & mask; break;
        case PortSlot::W: {
            EData* e = static_cast<EData*>(p.ptr);
            uint32_t n = (p.width + 31) / 32;
            for (uint32_t i = 0; i < n; ++i) e[i] = static_cast<EData>(w[i / 2] >> (32 * (i % 2)));
            // Verilator expects the unused top bits of a wide input to be zero.
            if (p.width % 32) e[n - 1] &= (EData(1) << (p.width % 32)) - 1;
            break;
        }
    }
}

void Sim::read(const PortSlot& p, uint64_t* w) const {
    switch (p.kind) {
        case PortSlot::C: w[0] = *static_cast<const CData*>(p.ptr); break;
        case PortSlot::S: w[0] = *static_cast<const SData*>(p.ptr); break;
        case PortSlot::I: w[0] = *static_cast<const IData*>(p.ptr); break;
        case PortSlot::Q: w[0] = *static_cast<const QData*>(p.ptr); break;
        case PortSlot::W: {
            const EData* e = static_cast<const EData*>(p.ptr);
            uint32_t n = (p.width + 31) / 32;
            for (uint32_t i = 0; i < p.words64; ++i) w[i] = 0;
            for (uint32_t i = 0; i < n; ++i) w[i / 2] |= uint64_t(e[i]) << (32 * (i % 2));
            break;
        }
    }
}

void Sim::set_input(size_t idx, rust::Slice<const uint64_t> words) {
    if (idx >= ports_.size() || !ports_[idx].input || words.size() < ports_[idx].words64)
        throw std::out_of_range("set_input: bad port index or too few words");
    write(ports_[idx], words.data());
}

void Sim::get_output(size_t idx, rust::Slice<uint64_t> words) const {
    if (idx >= ports_.size() || words.size() < ports_[idx].words64)
        throw std::out_of_range("get_output: bad port index or too few words");
    read(ports_[idx], words.data());
}

void Sim::set_inputs(rust::Slice<const uint64_t> words) {
    const uint64_t* w = words.data();
    size_t left = words.size();
    for (size_t i : inputs_) {
        const PortSlot& p = ports_[i];
        if (left < p.words64) throw std::out_of_range("set_inputs: too few words");
        write(p, w);
        w += p.words64;
        left -= p.words64;
    }
}

void Sim::get_outputs(rust::Slice<uint64_t> words) const {
    uint64_t* w = words.data();
    size_t left = words.size();
    for (size_t i : outputs_) {
        const PortSlot& p = ports_[i];
        if (left < p.words64) throw std::out_of_range("get_outputs: too few words");
        read(p, w);
        w += p.words64;
        left -= p.words64;
    }
}

void Sim::comb(rust::Slice<const uint64_t> inputs, rust::Slice<uint64_t> outputs) {
    *clk_ = 0;
    set_inputs(inputs);
    do_eval();
    get_outputs(outputs);
}

void Sim::posedge() {
    *clk_ = 1;
    do_eval();
}

void Sim::trace_open(rust::Str path) {
    if (vcd_) vcd_->close();
    vcd_.reset(new VerilatedVcdC);
    do_trace(vcd_.get());
    vcd_->open(std::string(path).c_str());
    if (!vcd_->isOpen()) {
        vcd_.reset();
        throw std::runtime_error("cannot open trace file " + std::string(path));
    }
}

void Sim::trace_dump(uint64_t time) {
    if (vcd_) vcd_->dump(time);
}

void Sim::trace_close() {
    if (vcd_) vcd_->close();
    vcd_.reset();
}

void Sim::finish() { do_final(); }

}  // namespace mrnic_verif

// Element arithmetic of the switch reduction unit, bit for bit the same as
// the TLM model's (tlm/reduction.cpp):
// - fp32 sum: IEEE 754 binary32 addition, round to nearest even, subnormal
//   inputs and results kept (no flush to zero); infinities as IEEE; every NaN
//   result is the canonical quiet NaN 0x7fc00000.
// - fp32 min/max: min(a, b) = b < a ? b : a, max(a, b) = a < b ? b : a, with
//   IEEE less-than (false when either is NaN; -0 equals +0): the first
//   operand wins ties and NaN against a number; a NaN result is canonical.
// - bf16: both operands widened to fp32 (exactly), combined as fp32, the
//   result rounded to bf16 to nearest even once (a NaN keeps its upper half,
//   quieted).
// - int32: two's complement; sums wrap around.
package reduction_pkg;

  localparam logic [1:0] OP_SUM = 2'd0;
  localparam logic [1:0] OP_MIN = 2'd1;
  localparam logic [1:0] OP_MAX = 2'd2;

  localparam logic [1:0] T_FP32 = 2'd0;
  localparam logic [1:0] T_BF16 = 2'd1;
  localparam logic [1:0] T_INT32 = 2'd2;

  localparam logic [31:0] CANONICAL_NAN = 32'h7fc0_0000;

  // Exponent and fraction of a binary32 (the sign does not matter here).
  function automatic logic is_nan(input logic [30:0] x);
    return (x[30:23] == 8'hff) && (x[22:0] != 23'd0);
  endfunction

  // IEEE a < b.
  function automatic logic fp32_lt(input logic [31:0] a, input logic [31:0] b);
    if (is_nan(a[30:0]) || is_nan(b[30:0])) return 1'b0;
    if (a[30:0] == 31'd0 && b[30:0] == 31'd0) return 1'b0;  // -0 == +0
    if (a[31] != b[31]) return a[31];                       // negative < positive
    if (a[31] == 1'b0) return a[30:0] < b[30:0];
    return a[30:0] > b[30:0];
  endfunction

  // Leading zeros of a 27-bit significand (27 when zero).
  function automatic logic [4:0] leading_zeros27(input logic [26:0] s);
    logic [4:0] n;
    logic       found;
    n = 5'd27;
    found = 1'b0;
    for (int i = 26; i >= 0; i--) begin
      if (!found && s[i]) begin
        n = 5'(26 - i);
        found = 1'b1;
      end
    end
    return n;
  endfunction

  // IEEE binary32 addition, round to nearest even.
  function automatic logic [31:0] fp32_add(input logic [31:0] a, input logic [31:0] b);
    logic        sx, sy, swap, round_up;
    logic [7:0]  ea, eb;
    logic [8:0]  ex, ey, d, e, sh;
    logic [23:0] mx, my;
    logic [26:0] xe, ye, yfull;
    logic [27:0] s;
    logic [24:0] r;
    logic [4:0]  lz;
    ea = a[30:23];
    eb = b[30:23];
    if (is_nan(a[30:0]) || is_nan(b[30:0])) return CANONICAL_NAN;
    if (ea == 8'hff && eb == 8'hff) return (a[31] == b[31]) ? a : CANONICAL_NAN;  // inf + inf, inf - inf
    if (ea == 8'hff) return a;
    if (eb == 8'hff) return b;
    // x: the operand of larger magnitude. Subnormals have exponent 1 and no
    // hidden bit.
    swap = a[30:0] < b[30:0];
    sx = swap ? b[31] : a[31];
    sy = swap ? a[31] : b[31];
    mx = swap ? {eb != 8'd0, b[22:0]} : {ea != 8'd0, a[22:0]};
    my = swap ? {ea != 8'd0, a[22:0]} : {eb != 8'd0, b[22:0]};
    ex = swap ? {1'b0, (eb == 8'd0) ? 8'd1 : eb} : {1'b0, (ea == 8'd0) ? 8'd1 : ea};
    ey = swap ? {1'b0, (ea == 8'd0) ? 8'd1 : ea} : {1'b0, (eb == 8'd0) ? 8'd1 : eb};
    d = ex - ey;
    // Three bits below the significand: guard, round, and sticky (the OR of
    // everything shifted further out).
    xe = {mx, 3'b000};
    yfull = {my, 3'b000};
    if (d > 9'd26) begin
      ye = {26'd0, |yfull};
    end else begin
      ye = yfull >> d;
      if ((yfull & ((27'd1 << d) - 27'd1)) != 27'd0) ye[0] = 1'b1;
    end
    e = ex;
    if (sx == sy) begin
      s = {1'b0, xe} + {1'b0, ye};
      if (s[27]) begin  // carry: one place right, keeping the sticky bit
        s = {1'b0, s[27:1]} | {27'd0, s[0]};
        e = e + 9'd1;
      end
    end else begin
      s = {1'b0, xe} - {1'b0, ye};
      if (s == 28'd0) return 32'h0000_0000;  // exact cancellation: +0
      // Normalize left, but not below exponent 1 (the result is then subnormal).
      lz = leading_zeros27(s[26:0]);
      sh = ({4'd0, lz} < e - 9'd1) ? {4'd0, lz} : e - 9'd1;
      s = s << sh;
      e = e - sh;
    end
    round_up = s[2] & (s[1] | s[0] | s[3]);
    r = {1'b0, s[26:3]} + {24'd0, round_up};
    if (r[24]) begin  // rounded up to the next power of two
      r = r >> 1;
      e = e + 9'd1;
    end
    if (e >= 9'd255) return {sx, 8'hff, 23'd0};
    return {sx, r[23] ? e[7:0] : 8'd0, r[22:0]};
  endfunction

  function automatic logic [31:0] fp32_combine(input logic [31:0] a, input logic [31:0] b, input logic [1:0] op);
    logic [31:0] r;
    case (op)
      OP_SUM:  r = fp32_add(a, b);
      OP_MIN:  r = fp32_lt(b, a) ? b : a;
      OP_MAX:  r = fp32_lt(a, b) ? b : a;
      default: r = a;  // not an operation: the first operand
    endcase
    return is_nan(r[30:0]) ? CANONICAL_NAN : r;
  endfunction

  function automatic logic [15:0] fp32_to_bf16(input logic [31:0] x);
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0] rounded;  // only its upper half is the result
    /* verilator lint_on UNUSEDSIGNAL */
    if (is_nan(x[30:0])) return x[31:16] | 16'h0040;
    rounded = x + 32'h0000_7fff + {31'd0, x[16]};
    return rounded[31:16];
  endfunction

  function automatic logic [31:0] int32_combine(input logic [31:0] a, input logic [31:0] b, input logic [1:0] op);
    case (op)
      OP_SUM:  return a + b;
      OP_MIN:  return ($signed(b) < $signed(a)) ? b : a;
      OP_MAX:  return ($signed(a) < $signed(b)) ? b : a;
      default: return a;
    endcase
  endfunction

  // One 32-bit lane: an fp32 or int32 element, or two bf16 elements.
  function automatic logic [31:0] combine32(input logic [31:0] a, input logic [31:0] b, input logic [1:0] op,
                                            input logic [1:0] dtype);
    case (dtype)
      T_FP32:  return fp32_combine(a, b, op);
      T_BF16:
        return {fp32_to_bf16(fp32_combine({a[31:16], 16'd0}, {b[31:16], 16'd0}, op)),
                fp32_to_bf16(fp32_combine({a[15:0], 16'd0}, {b[15:0], 16'd0}, op))};
      T_INT32: return int32_combine(a, b, op);
      default: return a;  // not a type the unit knows: the first operand
    endcase
  endfunction

endpackage

// The switch reduction unit's datapath: K input streams of W-bit beats,
// combined element by element into one output stream.
//
// - Streams 0 .. n_streams-1 take part (1 <= n_streams <= K); the others are
//   ignored. A beat is taken when every taking-part stream offers one
//   (valid) and the pipeline can move: then in_ready is high on exactly those
//   streams, so each of them hands over one beat in that cycle.
// - The beats are combined in stream order, a left fold: ((s0 op s1) op s2)
//   ..., one stream per pipeline stage, so the order, and with it the
//   rounding, does not depend on timing (reduction_pkg.sv defines the
//   arithmetic). A W-bit beat holds W/32 fp32 or int32 elements or W/16
//   bf16 elements, element j in the lowest bits first (memory order).
// - Pipelined: a capture stage, K-1 combining stages and OUT_STAGES more
//   registers, so a beat comes out K + OUT_STAGES cycles after it went in,
//   one beat per cycle. When the output is not taken (out_ready low) the
//   whole pipeline holds, and in_ready falls: backpressure to the inputs.
// - op and dtype must stay stable while beats are in the pipeline.
module reduction_unit
  import reduction_pkg::*;
#(
    parameter int K = 8,
    parameter int W = 256,
    parameter int OUT_STAGES = 1
) (
    input  logic                       clk,
    input  logic                       rst_n,
    input  logic [1:0]                 op,         // OP_SUM, OP_MIN, OP_MAX
    input  logic [1:0]                 dtype,      // T_FP32, T_BF16, T_INT32
    input  logic [$clog2(K+1)-1:0]     n_streams,  // streams taking part
    input  logic [K-1:0]               in_valid,
    output logic [K-1:0]               in_ready,
    input  logic [K*W-1:0]             in_data,    // stream k in bits [k*W +: W]
    output logic                       out_valid,
    input  logic                       out_ready,
    output logic [W-1:0]               out_data
);
  localparam int LANES = W / 32;
  localparam int STAGES = K + OUT_STAGES;  // capture, K-1 combines, then the output registers

  // Checked at elaboration: whole 32-bit lanes, at least two streams.
  if (W % 32 != 0 || W < 32) begin : g_bad_width
    $error("W must be a positive multiple of 32");
  end
  if (K < 2) begin : g_bad_k
    $error("K must be at least 2");
  end

  logic [K-1:0] taking_part;
  always_comb begin
    for (int k = 0; k < K; k++) taking_part[k] = k < int'(n_streams);
  end

  logic [STAGES-1:0] valid_q;
  logic              advance;  // every stage moves on this cycle
  logic              take;     // and a new beat enters
  assign advance = !valid_q[STAGES-1] || out_ready;
  assign take = advance && ((in_valid | ~taking_part) == {K{1'b1}});
  assign in_ready = take ? taking_part : '0;

  // Stage s holds the running result acc_q[s] and the beats of the streams
  // still to be folded in (rest_q[s], stream k at [k*W +: W]).
  logic [W-1:0]   acc_q[STAGES];
  logic [K*W-1:0] rest_q[K];

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      valid_q <= '0;
    end else if (advance) begin
      valid_q <= {valid_q[STAGES-2:0], take};
    end
  end

  // Capture.
  always_ff @(posedge clk) begin
    if (advance) begin
      acc_q[0] <= in_data[W-1:0];
      rest_q[0] <= in_data;
    end
  end

  // Every lane of a beat combined with the same lanes of another.
  function automatic logic [W-1:0] fold(input logic [W-1:0] acc, input logic [W-1:0] beat, input logic [1:0] o,
                                        input logic [1:0] t);
    logic [W-1:0] r;
    for (int l = 0; l < LANES; l++) r[l*32 +: 32] = combine32(acc[l*32 +: 32], beat[l*32 +: 32], o, t);
    return r;
  endfunction

  // Combine stream s into the running result at stage s.
  for (genvar s = 1; s < K; s++) begin : g_combine
    always_ff @(posedge clk) begin
      if (advance) begin
        acc_q[s] <= (s < int'(n_streams)) ? fold(acc_q[s-1], rest_q[s-1][s*W +: W], op, dtype) : acc_q[s-1];
        rest_q[s] <= rest_q[s-1];
      end
    end
  end

  // Output registers, for timing closure.
  for (genvar s = K; s < STAGES; s++) begin : g_out
    always_ff @(posedge clk) begin
      if (advance) acc_q[s] <= acc_q[s-1];
    end
  end

  assign out_valid = valid_q[STAGES-1];

  // Checker self-test, in simulation only: the plusarg +fault_lane=N flips
  // the lowest bit of 32-bit lane N of every output beat, so that a test can
  // make the transactor's bit-for-bit check fire on a real wrong result.
`ifndef SYNTHESIS
  logic [W-1:0] fault_mask = '0;
  initial begin
    int fault_lane;
    if ($value$plusargs("fault_lane=%d", fault_lane) && fault_lane >= 0 && fault_lane < LANES)
      fault_mask = {{(W - 1){1'b0}}, 1'b1} << (32 * fault_lane);
  end
  assign out_data = acc_q[STAGES-1] ^ fault_mask;
`else
  assign out_data = acc_q[STAGES-1];
`endif

  // The last stage's copy of the beats is not read again.
  logic unused;
  assign unused = ^rest_q[K-1];
endmodule

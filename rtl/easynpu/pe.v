// One processing element of EasyNPU's PE array (C model:
// src/sim/easynpu/pe.c): an 8x8 multiplier, an ACC_W-bit adder, the psum
// register file of DEPTH entries, and the requantizer output stage whose
// int8 result is kept beside the psum (sval: what a fused stage would read
// back through ps_back_en).  In an issued cycle the entry e takes
//   first ? bias + x * w : psum[e] + x * w
// and, on the final pass, its requantized value (0 on a lane past the
// word's channels).  The psum is registered at the issue edge: the C model
// holds the value from the issue on and enforces the pipeline depth through
// the entry's ready time (pe_array).
module pe #(
    parameter ACC_W = 32,
    parameter DEPTH = 64,
    parameter EW = 6,
    parameter MB = 20
) (
    input wire clk,
    input wire en,
    input wire first,
    input wire final_pass,
    input wire keep,  // the lane holds a channel of the word
    input wire [EW-1:0] e,
    input wire signed [7:0] x,
    input wire signed [7:0] w,
    input wire signed [31:0] bias,
    input wire [MB-1:0] m,
    input wire [5:0] s,
    input wire signed [7:0] zp,
    input wire signed [7:0] lo,
    input wire signed [7:0] hi,
    // co-simulation: the entry the testbench reads
    input wire [EW-1:0] dbg_e,
    output wire signed [ACC_W-1:0] dbg_ps,
    output wire [7:0] dbg_sv,
    // the requantized value of this issue, to the writer
    output wire [7:0] qo
);
    reg signed [ACC_W-1:0] ps[0:DEPTH-1];
    reg [7:0] sv[0:DEPTH-1];
    wire signed [15:0] prod = x * w;
    /* verilator lint_off UNUSEDSIGNAL */
    wire signed [31:0] bias_u = bias;  // the bias fits ACC_W (the compiler's bound)
    /* verilator lint_on UNUSEDSIGNAL */
    wire signed [ACC_W-1:0] base = first ? bias_u[ACC_W-1:0] : ps[e];
    wire signed [ACC_W-1:0] nps = base + {{(ACC_W - 16) {prod[15]}}, prod};
    wire [7:0] q;
    requant #(
        .ACC_W(ACC_W),
        .MB(MB)
    ) u_rq (
        .acc(nps),
        .m(m),
        .s(s),
        .zp(zp),
        .lo(lo),
        .hi(hi),
        .q(q)
    );
    assign qo = keep ? q : 8'd0;
    always @(posedge clk) begin
        if (en) begin
            ps[e] <= nps;
            if (final_pass) sv[e] <= qo;
        end
    end
    assign dbg_ps = ps[dbg_e];
    assign dbg_sv = sv[dbg_e];
endmodule

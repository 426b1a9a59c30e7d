// The requantizer of one output MUX (C model: sya_mux_emit in
// src/sim/systolic/pe_array.c; the rule is enpu_requant of
// src/quant/numerics.c):
//   q = clamp(((acc + bias) * M + 2^(S-1)) >>> S + zp, lo, hi)
// with ties toward +infinity (the shift is arithmetic) and no rounding term
// when S = 0.  The channel's bias, M and S are read from the controller's
// parameter registers (instruction, channel); the unit's output zero point
// and clamp from its configuration registers (tag).  The result then takes
// RQ pipeline stages to the re-shaping unit (RQ = requant_latency, 0: the
// same cycle).
module requant #(
    parameter ACC_W = 26,
    parameter TW = 7,
    parameter CGW = 7,  // bits of an array column index
    parameter MB = 20,  // multiplier bits (M < 2^MB)
    parameter IW = 16,  // bits of an instruction index
    parameter OW = 16,  // bits of an output channel
    parameter RQ = 2
) (
    /* verilator lint_off UNUSEDSIGNAL */
    input wire clk,  // unused when RQ = 0
    input wire rst,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire in_vld,
    input wire [CGW-1:0] in_c,
    input wire signed [ACC_W-1:0] in_acc,
    input wire [TW-1:0] in_tag,
    // configuration registers of the unit
    output wire [TW-1:0] cfg_tag,
    input wire [IW-1:0] cfg_instr,
    input wire [OW-1:0] cfg_og0,  // output channel of column 0
    input wire signed [7:0] cfg_zp,
    input wire signed [7:0] cfg_lo,
    input wire signed [7:0] cfg_hi,
    // parameter registers of the instruction
    output wire [IW-1:0] prm_instr,
    output wire [OW-1:0] prm_ch,
    input wire signed [31:0] prm_bias,
    input wire [MB-1:0] prm_m,
    input wire [5:0] prm_s,
    // towards the re-shaping unit
    output wire out_vld,
    output wire [7:0] out_q,
    output wire [CGW-1:0] out_c,
    output wire [TW-1:0] out_tag,
    // the pipeline registers {tag, c, q, vld}, stage 1 first
    output wire [(RQ > 0 ? RQ : 1)*(TW+CGW+9)-1:0] dbg
);
    localparam SW = TW + CGW + 9;
    localparam PW = 66;
    assign cfg_tag = in_tag;
    assign prm_instr = cfg_instr;
    assign prm_ch = cfg_og0 + {{(OW - CGW) {1'b0}}, in_c};

    wire signed [32:0] sum = {{(33 - ACC_W) {in_acc[ACC_W-1]}}, in_acc} + {prm_bias[31], prm_bias};
    wire signed [33+MB:0] prod = sum * $signed({1'b0, prm_m});
    wire signed [PW-1:0] prod_x = {{(PW - 34 - MB) {prod[33+MB]}}, prod};
    wire signed [PW-1:0] half = (prm_s == 6'd0) ? {PW{1'b0}} : ({{(PW - 1) {1'b0}}, 1'b1} << (prm_s - 6'd1));
    wire signed [PW-1:0] shifted = (prod_x + half) >>> prm_s;
    wire signed [PW-1:0] v = shifted + {{(PW - 8) {cfg_zp[7]}}, cfg_zp};
    wire signed [PW-1:0] lo_x = {{(PW - 8) {cfg_lo[7]}}, cfg_lo};
    wire signed [PW-1:0] hi_x = {{(PW - 8) {cfg_hi[7]}}, cfg_hi};
    wire [7:0] q = (v < lo_x) ? cfg_lo : (v > hi_x) ? cfg_hi : v[7:0];

    wire [SW-1:0] s0 = {in_tag, in_c, q, in_vld};
    wire [SW-1:0] so;
    generate
        if (RQ == 0) begin : g_comb
            assign so = s0;
            assign dbg = {SW{1'b0}};
        end else begin : g_pipe
            reg [SW-1:0] st[0:RQ-1];
            integer i;
            always @(posedge clk) begin
                st[0] <= s0;
                for (i = 1; i < RQ; i = i + 1) st[i] <= st[i-1];
                if (rst) for (i = 0; i < RQ; i = i + 1) st[i][0] <= 1'b0;
            end
            assign so = st[RQ-1];
            genvar k;
            for (k = 0; k < RQ; k = k + 1) begin : g_dbg
                assign dbg[SW*k+:SW] = st[k];
            end
        end
    endgenerate
    assign out_vld = so[0];
    assign out_q = so[8:1];
    assign out_c = so[CGW+8:9];
    assign out_tag = so[SW-1:CGW+9];
endmodule

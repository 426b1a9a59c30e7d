// The re-shaping unit (C model: src/sim/systolic/sync_shape.c): each row's
// MUXes deliver a point's channels one per cycle, in column order; the unit
// gathers them into the SRAM word they belong to and writes the word (its
// lanes of this unit, byte-enabled) in the cycle its last channel arrives.
// One assembly register per MUX (row r, bank column bc); a word that spans
// two bank columns continues in the east MUX's register from the west one's
// (its previous channel arrived there the cycle before).  Per unit (tag) the
// configuration registers give the lane of column 0 in its word (lane0), the
// word address of row 0's first word (addr0 = ofmap + p0*wpp + og0/WB), the
// words per pixel (wpp) and the unit's columns.
module sync_shape #(
    parameter R = 32,
    parameter BC = 2,
    parameter NC = 16,
    parameter TW = 7,
    parameter CGW = 7,
    parameter AW = 15,
    parameter WB = 32,
    parameter LBW = 5
) (
    input wire clk,
    input wire [R*BC-1:0] in_vld,
    input wire [8*R*BC-1:0] in_q,
    input wire [CGW*R*BC-1:0] in_c,
    input wire [TW*R*BC-1:0] in_tag,
    output wire [TW*R*BC-1:0] cfg_tag,
    input wire [LBW*R*BC-1:0] cfg_lane0,
    input wire [AW*R*BC-1:0] cfg_addr0,
    input wire [AW*R*BC-1:0] cfg_wpp,
    input wire [CGW*R*BC-1:0] cfg_cols,
    output wire [R*BC-1:0] wr_en,
    output wire [AW*R*BC-1:0] wr_addr,
    output wire [WB*R*BC-1:0] wr_be,
    output wire [8*WB*R*BC-1:0] wr_data
);
    localparam XW = LBW + CGW + 1;
    localparam integer WBI = WB, NCI = NC;
    localparam [XW-1:0] WBX = WBI[XW-1:0];
    localparam [XW-1:0] WBM1 = WBX - 1'b1;
    reg [8*WB-1:0] buf_q[0:R*BC-1];
    reg [WB-1:0] buf_be[0:R*BC-1];

    genvar r, bc;
    generate
        for (r = 0; r < R; r = r + 1) begin : g_r
            for (bc = 0; bc < BC; bc = bc + 1) begin : g_bc
                localparam integer M = r * BC + bc;
                wire vld = in_vld[M];
                wire [CGW-1:0] c = in_c[CGW*M+:CGW];
                wire [CGW-1:0] cols = cfg_cols[CGW*M+:CGW];
                wire [XW-1:0] x = {{(XW - LBW) {1'b0}}, cfg_lane0[LBW*M+:LBW]} + {{(XW - CGW) {1'b0}}, c};
                wire [XW-1:0] wofs = x / WBX;
                /* verilator lint_off UNUSEDSIGNAL */
                wire [AW+XW-1:0] wofs_w = {{AW{1'b0}}, wofs};  // zero-extended, cut to AW
                /* verilator lint_on UNUSEDSIGNAL */
                localparam [AW-1:0] ROW = r;
                wire [XW-1:0] lane_x = x % WBX;
                wire [LBW-1:0] lane = lane_x[LBW-1:0];
                wire first = (c == {CGW{1'b0}}) || (lane_x == {XW{1'b0}});
                wire last = (c == cols - 1'b1) || (lane_x == WBM1);
                // the word's earlier channels: in the west MUX's register
                // when this is the bank column's first column
                wire [8*WB-1:0] prev_q;
                wire [WB-1:0] prev_be;
                if (bc > 0) begin : g_west
                    localparam integer C0I = bc * NCI;
                    localparam [CGW-1:0] C0 = C0I[CGW-1:0];
                    wire from_west = (c == C0);
                    assign prev_q = from_west ? buf_q[M-1] : buf_q[M];
                    assign prev_be = from_west ? buf_be[M-1] : buf_be[M];
                end else begin : g_own
                    assign prev_q = buf_q[M];
                    assign prev_be = buf_be[M];
                end
                wire [WB-1:0] lane_bit = {{(WB - 1) {1'b0}}, 1'b1} << lane;
                wire [8*WB-1:0] lane_mask = {{(8 * WB - 8) {1'b0}}, 8'hff} << (8 * lane);
                wire [8*WB-1:0] q_x = {{(8 * WB - 8) {1'b0}}, in_q[8*M+:8]} << (8 * lane);
                wire [8*WB-1:0] nbuf = (prev_q & ~lane_mask) | q_x;
                wire [WB-1:0] nbe = (first ? {WB{1'b0}} : prev_be) | lane_bit;
                always @(posedge clk) begin
                    if (vld) begin
                        buf_q[M] <= nbuf;
                        buf_be[M] <= nbe;
                    end
                end
                assign cfg_tag[TW*M+:TW] = in_tag[TW*M+:TW];
                assign wr_en[M] = vld & last;
                assign wr_addr[AW*M+:AW] = cfg_addr0[AW*M+:AW] + ROW * cfg_wpp[AW*M+:AW] + wofs_w[AW-1:0];
                assign wr_be[WB*M+:WB] = nbe;
                assign wr_data[8*WB*M+:8*WB] = nbuf;
            end
        end
    endgenerate
endmodule

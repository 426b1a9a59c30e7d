// The global buffer's read side (C model: src/sim/systolic/glb.c): the
// controller's address generator presents every row's (column's) request of
// step k together, unskewed; row r's request is delayed r cycles (column c's
// c cycles) before it reads the activation (weight) SRAM, whose word comes
// back LA (LW) cycles later.  Row r of a unit entering at T thus receives
// step k at T + r + k and column c at T + c + k: the skew, made here.  The
// byte lane is selected from the word read; a padding position takes the
// unit's input zero point (read from the configuration registers by tag).
module glb #(
    parameter R = 32,
    parameter C = 32,
    parameter TW = 7,
    parameter AW = 15,   // main DTCM word address bits
    parameter WAW = 14,  // weight memory word address bits
    parameter WB = 32,   // bytes per SRAM word
    parameter LBW = 5,   // bits of a byte lane
    parameter LA = 1,    // activation SRAM read latency (>= 1)
    parameter LW = 1     // weight SRAM read latency (>= 1)
) (
    input wire clk,
    input wire rst,
    // unskewed activation requests, one per row
    input wire [R-1:0] rq_a_vld,
    input wire [AW*R-1:0] rq_a_addr,
    input wire [LBW*R-1:0] rq_a_lane,
    input wire [R-1:0] rq_a_pad,
    input wire [R-1:0] rq_a_first,
    input wire [R-1:0] rq_a_last,
    input wire [TW*R-1:0] rq_a_tag,
    // unskewed weight requests, one per column
    input wire [C-1:0] rq_w_vld,
    input wire [WAW*C-1:0] rq_w_addr,
    input wire [LBW*C-1:0] rq_w_lane,
    // the SRAM read ports (skewed)
    output wire [R-1:0] act_rd_en,
    output wire [AW*R-1:0] act_rd_addr,
    input wire [8*WB*R-1:0] act_rdata,
    output wire [C-1:0] wgt_rd_en,
    output wire [WAW*C-1:0] wgt_rd_addr,
    input wire [8*WB*C-1:0] wgt_rdata,
    // the input zero point of a row's unit (configuration registers)
    output wire [TW*R-1:0] zp_tag,
    input wire [8*R-1:0] zp_val,
    // the array's west and north edges
    output wire [R-1:0] a_vld,
    output wire [8*R-1:0] a_v,
    output wire [R-1:0] a_first,
    output wire [R-1:0] a_last,
    output wire [TW*R-1:0] a_tag,
    output wire [C-1:0] w_vld,
    output wire [8*C-1:0] w_v
);
    // a request: {tag, last, first, pad, lane, addr, vld}
    localparam AQ = TW + 3 + LBW + AW + 1;
    // what travels beside the SRAM read: {tag, last, first, pad, lane, vld}
    localparam AM = TW + 3 + LBW + 1;
    localparam WQ = LBW + WAW + 1;
    localparam WM = LBW + 1;

    genvar r, c;
    generate
        for (r = 0; r < R; r = r + 1) begin : g_row
            wire [AQ-1:0] q_in = {
                rq_a_tag[TW*r+:TW],
                rq_a_last[r],
                rq_a_first[r],
                rq_a_pad[r],
                rq_a_lane[LBW*r+:LBW],
                rq_a_addr[AW*r+:AW],
                rq_a_vld[r]
            };
            wire [AQ-1:0] q;  // the request after row r's skew
            if (r == 0) begin : g_noskew
                assign q = q_in;
            end else begin : g_skew
                reg [AQ-1:0] sk[0:r-1];
                integer i;
                always @(posedge clk) begin
                    sk[0] <= q_in;
                    for (i = 1; i < r; i = i + 1) sk[i] <= sk[i-1];
                    if (rst) for (i = 0; i < r; i = i + 1) sk[i][0] <= 1'b0;
                end
                assign q = sk[r-1];
            end
            // a padding position reads no word
            assign act_rd_en[r] = q[0] & ~q[AW+LBW+1];
            assign act_rd_addr[AW*r+:AW] = q[AW:1];
            // the request's fields beside the read, LA cycles
            reg [AM-1:0] mp[0:LA-1];
            integer j;
            always @(posedge clk) begin
                mp[0] <= {q[AQ-1:AW+1], q[0]};
                for (j = 1; j < LA; j = j + 1) mp[j] <= mp[j-1];
                if (rst) for (j = 0; j < LA; j = j + 1) mp[j][0] <= 1'b0;
            end
            wire [AM-1:0] m = mp[LA-1];
            wire [LBW-1:0] lane = m[LBW:1];
            wire pad = m[LBW+1];
            wire [8*WB-1:0] word = act_rdata[8*WB*r+:8*WB];
            assign a_vld[r] = m[0];
            assign a_first[r] = m[LBW+2];
            assign a_last[r] = m[LBW+3];
            assign a_tag[TW*r+:TW] = m[AM-1:LBW+4];
            assign zp_tag[TW*r+:TW] = m[AM-1:LBW+4];
            assign a_v[8*r+:8] = pad ? zp_val[8*r+:8] : word[8*lane+:8];
        end
        for (c = 0; c < C; c = c + 1) begin : g_col
            wire [WQ-1:0] q_in = {rq_w_lane[LBW*c+:LBW], rq_w_addr[WAW*c+:WAW], rq_w_vld[c]};
            wire [WQ-1:0] q;
            if (c == 0) begin : g_noskew
                assign q = q_in;
            end else begin : g_skew
                reg [WQ-1:0] sk[0:c-1];
                integer i;
                always @(posedge clk) begin
                    sk[0] <= q_in;
                    for (i = 1; i < c; i = i + 1) sk[i] <= sk[i-1];
                    if (rst) for (i = 0; i < c; i = i + 1) sk[i][0] <= 1'b0;
                end
                assign q = sk[c-1];
            end
            assign wgt_rd_en[c] = q[0];
            assign wgt_rd_addr[WAW*c+:WAW] = q[WAW:1];
            reg [WM-1:0] mp[0:LW-1];
            integer j;
            always @(posedge clk) begin
                mp[0] <= {q[WQ-1:WAW+1], q[0]};
                for (j = 1; j < LW; j = j + 1) mp[j] <= mp[j-1];
                if (rst) for (j = 0; j < LW; j = j + 1) mp[j][0] <= 1'b0;
            end
            wire [WM-1:0] m = mp[LW-1];
            wire [LBW-1:0] lane = m[LBW:1];
            wire [8*WB-1:0] word = wgt_rdata[8*WB*c+:8*WB];
            assign w_vld[c] = m[0];
            assign w_v[8*c+:8] = word[8*lane+:8];
        end
    endgenerate
endmodule

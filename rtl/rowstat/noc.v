// One multicast network of the row-stationary array, ifmap or filter (C
// model: src/sim/rowstat/noc.c, docs/rowstat.md "The multicast network"):
// the global buffer drives a bus down a column of row nodes, one per PE row;
// each row node drives a bus along its row of column nodes, one per PE.
// Every node holds a configurable ID and passes a value only when the tag
// the value carries equals it: a row node compares the row tag, a column
// node the column tag (one tag thus reaches a whole row, a diagonal or one
// PE, as the controller sets the IDs).  Each level is a register stage: NV
// values the global buffer sends in cycle t cross the row nodes into stage
// 1 at the edge of t + 1 and reach their PEs (dlv) in cycle t + 2.
// cfg loads the pass's IDs (bit TW of each: the node takes tags; clear, it
// takes nothing, the C model's -1) and empties both stages.
module noc #(
    parameter ROWS = 12,
    parameter COLS = 14,
    parameter NV = 4,   // values a cycle
    parameter DW = 16,  // value bits
    parameter TW = 16   // tag bits
) (
    input wire clk,
    input wire cfg,
    input wire [ROWS*(TW+1)-1:0] cfg_row_id,
    input wire [ROWS*COLS*(TW+1)-1:0] cfg_col_id,
    // the global buffer's values this cycle (a prefix of the NV slots)
    input wire [NV-1:0] in_vld,
    input wire [NV*DW-1:0] in_val,
    input wire [NV*TW-1:0] in_rtag,
    input wire [NV*TW-1:0] in_ctag,
    // to the PEs this cycle: PE (r, c) takes slot i's value when bit
    // (r * COLS + c) * NV + i is set
    output wire [ROWS*COLS*NV-1:0] dlv,
    output wire [NV*DW-1:0] dlv_val,
    // co-simulation: the stages
    output reg [NV-1:0] s0_vld,
    output reg [NV*DW-1:0] s0_val,
    output reg [NV*TW-1:0] s0_rtag,
    output reg [NV*TW-1:0] s0_ctag,
    output reg [NV-1:0] s1_vld,
    output reg [NV*TW-1:0] s1_ctag,
    output reg [NV*ROWS-1:0] s1_pass  // slot i passed row node r: bit i * ROWS + r
);
    reg [ROWS*(TW+1)-1:0] row_id;
    reg [ROWS*COLS*(TW+1)-1:0] col_id;
    reg [NV*DW-1:0] s1_val;
    assign dlv_val = s1_val;

    // the row nodes, on stage 0
    reg [NV*ROWS-1:0] pass;
    integer i, r;
    always @(*) begin
        for (i = 0; i < NV; i = i + 1)
            for (r = 0; r < ROWS; r = r + 1)
                pass[i*ROWS+r] = s0_vld[i] && row_id[r*(TW+1)+TW] && row_id[r*(TW+1)+:TW] == s0_rtag[i*TW+:TW];
    end

    // the column nodes, on stage 1
    genvar gr, gc, gi;
    generate
        for (gr = 0; gr < ROWS; gr = gr + 1) begin : g_row
            for (gc = 0; gc < COLS; gc = gc + 1) begin : g_col
                localparam integer ID = (gr * COLS + gc) * (TW + 1);
                for (gi = 0; gi < NV; gi = gi + 1) begin : g_slot
                    assign dlv[(gr*COLS+gc)*NV+gi] = s1_vld[gi] && s1_pass[gi*ROWS+gr] && col_id[ID+TW] &&
                        col_id[ID+:TW] == s1_ctag[gi*TW+:TW];
                end
            end
        end
    endgenerate

    always @(posedge clk) begin
        if (cfg) begin
            row_id <= cfg_row_id;
            col_id <= cfg_col_id;
            s0_vld <= 0;
            s1_vld <= 0;
            s1_pass <= 0;
        end else begin
            s1_vld <= s0_vld;
            s1_val <= s0_val;
            s1_ctag <= s0_ctag;
            s1_pass <= pass;
            s0_vld <= in_vld;
            s0_val <= in_val;
            s0_rtag <= in_rtag;
            s0_ctag <= in_ctag;
        end
    end
endmodule

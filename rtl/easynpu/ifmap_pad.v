// The ifmap scratch pads (C model: src/sim/easynpu/ifmap_pad.c): P pads of
// DIF 8-bit entries addressed together, stored as DIF words of P lanes, with
// a padding mark per entry.  One write port (the loader: one word per
// cycle) and one read port per virtual row (PE row x lane group, §16): the
// PE array reads the entry of its output position; a broadcast read picks
// lane `lane` of the word for every PE of the row, a multicast read gives
// lane i to PE i (both are selections in pe_array).  Reads are
// combinational: the C model's PE array reads the pads in the cycle it
// issues.  Each of the two banks (one when the tile does not fit half the
// pads) holds the unit the loader last started in it, whether all its words
// are written and a countdown of the DTCM's read latency Ld after its last
// word (the C model's pad_bank: unit, loaded, valid_at); the PE controller
// reads a unit's pass once its bank holds it and is valid.  A bank is free
// for the loader's next unit from the cycle after the PE controller read its
// unit for the last time (done), or from the chain's start.
module ifmap_pad #(
    parameter P = 16,
    parameter DIF = 64,
    parameter AW = 6,  // bits of an entry
    parameter NV = 4,  // read ports
    parameter UW = 8   // bits of a unit index
) (
    input wire clk,
    input wire rst,
    // the loader: a unit's first word (start) and last word (last) into bank ld_bank
    input wire ld_start,
    input wire ld_last,
    input wire ld_bank,
    input wire [UW-1:0] ld_unit,
    input wire [1:0] cfg_ld,  // the DTCM's read latency, 1..3
    input wire done,
    input wire done_bank,
    output wire [2*UW-1:0] bk_unit,
    output wire [1:0] bk_valid,
    output wire [1:0] bk_free,
    input wire we,
    input wire [AW-1:0] waddr,
    input wire [8*P-1:0] wdata,
    input wire wmark,
    input wire [AW*NV-1:0] raddr,
    output wire [8*P*NV-1:0] rword,
    output wire [NV-1:0] rmark
);
    reg [8*P-1:0] mem[0:DIF-1];
    reg mark[0:DIF-1];
    always @(posedge clk) begin
        if (we) begin
            mem[waddr] <= wdata;
            mark[waddr] <= wmark;
        end
    end
    genvar b;
    generate
        for (b = 0; b < 2; b = b + 1) begin : g_bank
            reg [UW-1:0] unit;
            reg loaded, free;
            reg [1:0] cnt;
            wire mine = ld_bank == b[0];
            always @(posedge clk) begin
                if (rst) begin
                    loaded <= 1'b0;
                    free <= 1'b1;
                    cnt <= 2'd0;
                end else begin
                    if (ld_start && mine) free <= 1'b0;
                    else if (done && done_bank == b[0]) free <= 1'b1;
                    if (ld_start && mine) begin
                        unit <= ld_unit;
                        loaded <= 1'b0;
                    end
                    if (ld_last && mine) begin
                        loaded <= 1'b1;
                        cnt <= cfg_ld - 1'b1;
                    end else if (cnt != 0) begin
                        cnt <= cnt - 1'b1;
                    end
                end
            end
            assign bk_unit[UW*b+:UW] = unit;
            assign bk_valid[b] = loaded && cnt == 0;
            assign bk_free[b] = free;
        end
    endgenerate
    genvar v;
    generate
        for (v = 0; v < NV; v = v + 1) begin : g_rd
            wire [AW-1:0] a = raddr[AW*v+:AW];
            assign rword[8*P*v+:8*P] = mem[a];
            assign rmark[v] = mark[a];
        end
    endgenerate
endmodule

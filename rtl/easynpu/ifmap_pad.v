// The ifmap scratch pads (C model: src/sim/easynpu/ifmap_pad.c): P pads of
// DIF 8-bit entries addressed together, stored as DIF words of P lanes, with
// a padding mark per entry.  One write port (the loader: one word per
// cycle) and one read port per virtual row (PE row x lane group, §16): the
// PE array reads the entry of its output position; a broadcast read picks
// lane `lane` of the word for every PE of the row, a multicast read gives
// lane i to PE i (both are selections in pe_array).  Reads are
// combinational: the C model's PE array reads the pads in the cycle it
// issues.
module ifmap_pad #(
    parameter P = 16,
    parameter DIF = 64,
    parameter AW = 6,  // bits of an entry
    parameter NV = 4   // read ports
) (
    input wire clk,
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
    genvar v;
    generate
        for (v = 0; v < NV; v = v + 1) begin : g_rd
            wire [AW-1:0] a = raddr[AW*v+:AW];
            assign rword[8*P*v+:8*P] = mem[a];
            assign rmark[v] = mark[a];
        end
    endgenerate
endmodule

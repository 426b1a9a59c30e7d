// One bank's row of NC PEs with the row's output MUX (C model:
// src/sim/systolic/pe_row.c).  Activations move one PE east per cycle, the
// weights come from the row above; the skew makes the row's PEs finish one
// per cycle, so the MUX registers at most one finished dot product per edge
// and hands it to the requantizer in the next cycle.  Two PEs finishing in
// one cycle is a scheduling error (the C model refuses it): mux_err.
module pe_row #(
    parameter NC = 16,
    parameter ACC_W = 26,
    parameter TW = 7,
    parameter CW = 6  // bits of a column index within the bank
) (
    input wire clk,
    input wire rst,
    // the west neighbour's activation register (or the array's west edge)
    input wire in_a_vld,
    input wire [7:0] in_a_v,
    input wire in_a_first,
    input wire in_a_last,
    input wire [TW-1:0] in_a_tag,
    // the weight registers of the row above (or the north edge)
    input wire [NC-1:0] in_w_vld,
    input wire [8*NC-1:0] in_w_v,
    // the east PE's activation register, for the bank to the east
    output wire out_a_vld,
    output wire [7:0] out_a_v,
    output wire out_a_first,
    output wire out_a_last,
    output wire [TW-1:0] out_a_tag,
    // this row's weight registers, for the row below
    output wire [NC-1:0] out_w_vld,
    output wire [8*NC-1:0] out_w_v,
    // the output MUX's register: the dot product finished last edge
    output reg mux_vld,
    output reg [CW-1:0] mux_c,
    output reg signed [ACC_W-1:0] mux_acc,
    output reg [TW-1:0] mux_tag,
    output wire mux_err,
    // every PE's registers, for co-simulation: {acc, w_v, w_vld, a_tag,
    // a_last, a_first, a_v, a_vld} per PE
    output wire [NC*(ACC_W+TW+20)-1:0] dbg
);
    localparam DW = ACC_W + TW + 20;
    wire [NC:0] a_vld;
    wire [8*(NC+1)-1:0] a_v;
    wire [NC:0] a_first, a_last;
    wire [TW*(NC+1)-1:0] a_tag;
    wire [NC-1:0] done;
    wire [ACC_W*NC-1:0] nacc;

    assign a_vld[0] = in_a_vld;
    assign a_v[7:0] = in_a_v;
    assign a_first[0] = in_a_first;
    assign a_last[0] = in_a_last;
    assign a_tag[TW-1:0] = in_a_tag;

    genvar c;
    generate
        for (c = 0; c < NC; c = c + 1) begin : g_pe
            wire [ACC_W-1:0] acc;
            pe #(
                .ACC_W(ACC_W),
                .TW(TW)
            ) u_pe (
                .clk(clk),
                .rst(rst),
                .in_a_vld(a_vld[c]),
                .in_a_v(a_v[8*c+:8]),
                .in_a_first(a_first[c]),
                .in_a_last(a_last[c]),
                .in_a_tag(a_tag[TW*c+:TW]),
                .in_w_vld(in_w_vld[c]),
                .in_w_v(in_w_v[8*c+:8]),
                .a_vld(a_vld[c+1]),
                .a_v(a_v[8*(c+1)+:8]),
                .a_first(a_first[c+1]),
                .a_last(a_last[c+1]),
                .a_tag(a_tag[TW*(c+1)+:TW]),
                .w_vld(out_w_vld[c]),
                .w_v(out_w_v[8*c+:8]),
                .acc(acc),
                .done(done[c]),
                .nacc(nacc[ACC_W*c+:ACC_W])
            );
            assign dbg[DW*c+:DW] = {
                acc,
                out_w_v[8*c+:8],
                out_w_vld[c],
                a_tag[TW*(c+1)+:TW],
                a_last[c+1],
                a_first[c+1],
                a_v[8*(c+1)+:8],
                a_vld[c+1]
            };
        end
    endgenerate

    assign out_a_vld = a_vld[NC];
    assign out_a_v = a_v[8*NC+:8];
    assign out_a_first = a_first[NC];
    assign out_a_last = a_last[NC];
    assign out_a_tag = a_tag[TW*NC+:TW];

    // the MUX: the one PE that finishes this cycle (lowest index if the
    // schedule were broken, which mux_err reports)
    reg [CW-1:0] sel;
    reg any, two;
    integer i;
    always @(*) begin
        sel = {CW{1'b0}};
        any = 1'b0;
        two = 1'b0;
        for (i = NC - 1; i >= 0; i = i - 1)
            if (done[i]) begin
                two = two | any;
                any = 1'b1;
                sel = i[CW-1:0];
            end
    end
    assign mux_err = two;

    always @(posedge clk) begin
        if (rst) mux_vld <= 1'b0;
        else mux_vld <= any;
        mux_c <= sel;
        mux_acc <= nacc[ACC_W*sel+:ACC_W];
        mux_tag <= a_tag[TW*sel+:TW];
    end
endmodule

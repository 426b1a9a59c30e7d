// The weight pad (C model: src/sim/easynpu/weight_pad.c): P lanes of DW
// 8-bit entries used as a circular buffer of DW words.  The weight reader
// pushes one weight-bus word per cycle into the tail slot; it is usable LW
// cycles later (the weight memory's read latency: the slot holds a
// countdown); the PE array reads the head slot (w_och_gcnt) and the PE
// controller frees it when its cycles are done.  count counts the slots
// held or in flight, as the C model's (the weight reader stalls when full).
module weight_pad #(
    parameter P = 16,
    parameter DW = 16,
    parameter SW = 4,  // bits of a slot index
    parameter LW = 1
) (
    input wire clk,
    input wire rst,
    input wire push,
    input wire [8*P-1:0] pdata,
    input wire pop,
    output wire [8*P-1:0] head,
    output wire head_rdy,
    output reg [SW-1:0] head_idx,
    output reg [SW:0] count
);
    localparam CW = 8;
    reg [8*P-1:0] mem[0:DW-1];
    // the tail slot, wrapping at DW (not a power of two in general)
    wire [SW:0] tail_x = {1'b0, head_idx} + count;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [SW:0] tail = tail_x >= DW[SW:0] ? tail_x - DW[SW:0] : tail_x;  // < DW
    /* verilator lint_on UNUSEDSIGNAL */
    wire [SW:0] head_n = {1'b0, head_idx} + 1'b1;
    // per slot: cycles until its word is usable
    wire [DW-1:0] slot_rdy;
    genvar s;
    generate
        for (s = 0; s < DW; s = s + 1) begin : g_slot
            reg [CW-1:0] wait_cnt;
            always @(posedge clk) begin
                if (push && tail[SW-1:0] == s[SW-1:0]) wait_cnt <= LW > 0 ? LW[CW-1:0] - 1'b1 : {CW{1'b0}};
                else if (wait_cnt != 0) wait_cnt <= wait_cnt - 1'b1;
            end
            assign slot_rdy[s] = wait_cnt == 0;
        end
    endgenerate
    always @(posedge clk) begin
        if (push) mem[tail[SW-1:0]] <= pdata;
        if (rst) begin
            head_idx <= {SW{1'b0}};
            count <= {(SW + 1) {1'b0}};
        end else begin
            if (pop) head_idx <= head_n >= DW[SW:0] ? {SW{1'b0}} : head_n[SW-1:0];
            count <= count + {{SW{1'b0}}, push} - {{SW{1'b0}}, pop};
        end
    end
    assign head = mem[head_idx];
    assign head_rdy = count != 0 && slot_rdy[head_idx];
endmodule

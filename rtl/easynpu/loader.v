// The ifmap loader (C model: sim_sched_loader in src/sim/easynpu/scheduler.c;
// docs/microarch.md §11.5, §11.7): it fills the ifmap pad bank of each load
// unit, one word a cycle.  Word j of a unit is input pixel (iy0 + j div xi,
// ix0 + j mod xi) of channel word kz (fc: word kz of the flattened map):
// inside the map a DTCM read (address ifmap + (iy * wi + ix) * wpp + iword
// + kz, wpp the map's words per pixel and iword the first one the conv
// reads: ifmap_wpp and ifmap_word, ISA 9; which needs the main bus: denied in a cycle the writer writes, it is
// tried again in the next), outside it a padding word (zp_in in every lane
// and the padding mark) that needs no bus.  A unit starts in its bank when
// the bank is free (its previous unit's last pad read is in an earlier
// cycle; unit 0 at once) and is valid Ld cycles after its last word.  The
// DTCM read port is combinational here (the testbench answers it from the C
// model's memory); the word is written into the pad at the cycle's edge and
// the bank's countdown makes it usable Ld cycles later, as the C model's
// valid_at.  The loader walks the units on its own cursor: the scheduler
// hands it the next load unit's registers (nl_*), taken when it starts one.
module loader #(
    parameter P = 16,
    parameter AW = 6,
    parameter CW = 16,
    parameter MAW = 14,
    parameter UW = 4
) (
    input wire clk,
    input wire rst,
    input wire cfg_fc,
    input wire [CW-1:0] cfg_hi,
    input wire [CW-1:0] cfg_wi,
    input wire [MAW-1:0] cfg_wpp,    // the map's words per pixel
    input wire [MAW-1:0] cfg_iword,  // the first of them read (a conv over some channel words)
    input wire [MAW-1:0] cfg_ifmap,
    input wire [7:0] cfg_pad,
    input wire [AW:0] cfg_bank_size,
    // the scheduler's next load unit
    input wire nl_done,
    input wire nl_u0,  // the chain's first unit: it starts at once
    input wire [UW-1:0] nl_u,
    input wire nl_bank,
    input wire [CW-1:0] nl_xi,
    input wire [CW-1:0] nl_nw,  // words: xi * yi
    input wire signed [CW:0] nl_iy0,
    input wire signed [CW:0] nl_ix0,
    input wire [MAW-1:0] nl_kz,
    input wire [1:0] bk_free,  // a bank's unit was read for the last time before this cycle
    input wire bus_busy,       // the writer has the main bus in this cycle
    // the DTCM read port
    output wire rd_req,
    output wire rd_en,
    output wire [MAW-1:0] rd_addr,
    input wire [8*P-1:0] rd_data,
    // the pad's write port and the banks
    output wire pad_we,
    output wire [AW-1:0] pad_waddr,
    output wire [8*P-1:0] pad_wdata,
    output wire pad_wmark,
    output wire ld_start,
    output wire ld_last,
    output wire ld_bank,
    output wire [UW-1:0] ld_unit,
    output wire unit_next  // the load unit is taken: the scheduler hands the next
);
    reg busy;
    reg [UW-1:0] u;
    reg bank;
    reg [CW-1:0] xi, nw, j, jx, jy;
    reg signed [CW:0] iy0, ix0;
    reg [MAW-1:0] kz;
    // a new unit starts in this cycle and its first word is tried at once
    assign ld_start = !busy && !nl_done && (nl_u0 || bk_free[nl_bank]);
    wire act = busy || ld_start;
    wire [UW-1:0] a_u = busy ? u : nl_u;
    wire a_bank = busy ? bank : nl_bank;
    wire [CW-1:0] a_xi = busy ? xi : nl_xi, a_nw = busy ? nw : nl_nw;
    wire [CW-1:0] a_j = busy ? j : {CW{1'b0}}, a_jx = busy ? jx : {CW{1'b0}}, a_jy = busy ? jy : {CW{1'b0}};
    wire signed [CW:0] a_iy0 = busy ? iy0 : nl_iy0, a_ix0 = busy ? ix0 : nl_ix0;
    wire [MAW-1:0] a_kz = busy ? kz : nl_kz;
    wire signed [CW+1:0] iy = a_iy0 + $signed({2'b0, a_jy}), ix = a_ix0 + $signed({2'b0, a_jx});
    wire in_map = cfg_fc || (iy >= 0 && iy < $signed({2'b0, cfg_hi}) && ix >= 0 && ix < $signed({2'b0, cfg_wi}));
    assign rd_req = act && in_map;
    assign rd_en = rd_req && !bus_busy;
    /* verilator lint_off WIDTH */
    wire [MAW-1:0] pix = iy * cfg_wi + ix;  // in_map the map: iy, ix >= 0
    /* verilator lint_on WIDTH */
    assign rd_addr = cfg_fc ? cfg_ifmap + a_kz : cfg_ifmap + pix * cfg_wpp + cfg_iword + a_kz;
    assign pad_we = act && (!in_map || !bus_busy);
    /* verilator lint_off UNUSEDSIGNAL */
    wire [AW:0] ent = (a_bank ? cfg_bank_size : {(AW + 1) {1'b0}}) + a_j[AW:0];  // < DIF
    /* verilator lint_on UNUSEDSIGNAL */
    assign pad_waddr = ent[AW-1:0];
    assign pad_wdata = in_map ? rd_data : {P{cfg_pad}};
    assign pad_wmark = !in_map;
    wire last = pad_we && a_j == a_nw - 1'b1;
    assign ld_last = last;
    assign ld_bank = a_bank;
    assign ld_unit = a_u;
    assign unit_next = ld_start;
    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
        end else begin
            if (ld_start) begin
                u <= nl_u;
                bank <= nl_bank;
                xi <= nl_xi;
                nw <= nl_nw;
                iy0 <= nl_iy0;
                ix0 <= nl_ix0;
                kz <= nl_kz;
            end
            busy <= act && !last;
            if (pad_we) begin
                j <= a_j + 1'b1;
                if (a_jx == a_xi - 1'b1) begin
                    jx <= {CW{1'b0}};
                    jy <= a_jy + 1'b1;
                end else begin
                    jx <= a_jx + 1'b1;
                    jy <= a_jy;
                end
            end else if (ld_start) begin
                // started, its first word denied the bus
                j <= {CW{1'b0}};
                jx <= {CW{1'b0}};
                jy <= {CW{1'b0}};
            end
        end
    end
endmodule

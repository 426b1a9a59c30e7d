.format 3.0
.arch easynpu
dma name="x" dma_dir=load dram_addr=100 dma_rows=4 dma_len=4 dram_stride=8 sram_stride=4 push=1
relu name="r" cast_mode=multicast hi=4 wi=4 ci=16 ho=4 wo=4 co=16 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=1 rows=1 ofmap_addr=100 out_mult=1 clamp_lo=-128 clamp_hi=127 pop=2 push=4 group=0
dma name="y" dma_engine=1 dma_dir=store dram_addr=200 sram_addr=100 dma_rows=1 dma_len=16 pop=1 push=1 out="y" out_io=1 group=0
end pop=4
.io input name=x dtype=int8 layout=nhwc shape=1x4x4x16 scale=0.5 zero_point=0 mem=dram addr=100
.io output name=y dtype=int8 layout=nhwc shape=1x4x4x16 scale=0.5 zero_point=0 mem=dram addr=200
.section dram_init
.hex 000102030405060708090a0b0c0d0e0f
.zero 1600

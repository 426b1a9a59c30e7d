; EasyNPU program listing: `easynpu asm THIS -o PROG.enpu` rebuilds the program
.arch {"name":"easynpu","engine":"easynpu","pes":16,"pe_rows":1,"ifmap_pads":16,"ifmap_pad_depth":64,"weight_pad_groups":16,"weight_pad_depth":16,"psum_depth":64,"bus_bits":128,"main_dtcm_bytes":65536,"skip_dtcm_bytes":16384,"weight_mem_bytes":65536,"itcm_bytes":4096,"acc_bits":32,"mult_bits":20,"act_segments":16,"dtcm_read_latency":1,"weight_mem_latency":1,"instr_fetch_cycles":4,"decode_cycles":1,"pe_pipeline_depth":2,"requant_latency":2,"host_sync_cycles":16,"clock_mhz":100}

; 8 instructions
conv name="conv1" fuse_next=1 fuse_act=table hi=26 wi=49 ci=1 ho=24 wo=24 co=28 hk=3 wk=3 stride_h=1 stride_w=2 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=9 tile_yi=6 zs=2 rows=1 bias_addr=18 quant_addr=25 zp_in=-3 zp_out=5 clamp_lo=-128 clamp_hi=127 src="Conv_0" src="BatchNormalization_1"	; 0
act name="conv1 \"sigmoid\"\x09act" cast_mode=multicast hi=24 wi=24 ci=28 ho=24 wo=24 co=28 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=2 rows=1 ofmap_addr=2944 table_addr=39 zp_in=5 zp_out=-128 clamp_lo=-128 clamp_hi=127 out_mult=777777 out_shift=27 src="Sigmoid_2"	; 1
maxpool name="pool1" store_skip=1 cast_mode=multicast hi=24 wi=24 ci=28 ho=8 wo=8 co=28 hk=3 wk=3 stride_h=3 stride_w=3 dil_h=1 dil_w=1 groups=1 tile_x=2 tile_y=2 tile_xi=6 tile_yi=6 zs=1 rows=1 ifmap_addr=2944 zp_in=-128 zp_out=-128 clamp_lo=-128 clamp_hi=127 out_mult=1 src="MaxPool_3"	; 2
add name="add1" cast_mode=multicast op2_mem=skip hi=8 wi=8 ci=28 ho=8 wo=8 co=28 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=8 tile_y=8 tile_xi=8 tile_yi=8 zs=1 rows=1 ofmap_addr=3968 zp_in=-128 zp_out=-7 zp_op2=-128 clamp_lo=-128 clamp_hi=127 in1_mult=127 in2_mult=64 out_mult=1048575 out_shift=63 src="Add_4"	; 3
reshape name="flatten" cast_mode=multicast perm=chw hi=8 wi=8 ci=28 ho=1 wo=1 co=1792 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=4 tile_y=4 tile_xi=4 tile_yi=4 zs=1 rows=1 ifmap_addr=3968 clamp_lo=-128 clamp_hi=127 src="Flatten_5"	; 4
conv name="fc1" hi=1 wi=1 ci=1792 ho=1 wo=1 co=12 hk=1 wk=1 stride_h=1 stride_w=1 dil_h=1 dil_w=1 groups=1 tile_x=1 tile_y=1 tile_xi=1 tile_yi=1 zs=1 rows=1 ofmap_addr=4095 weight_addr=47 bias_addr=1839 quant_addr=1842 zp_in=-7 zp_out=3 clamp_lo=-128 clamp_hi=127 src="Gemm_6"	; 5
sync name="softmax" src="Softmax_7"	; 6
end	; 7

.table name="Sigmoid" addr=39 segments=16 max_err_lsb=0.75	; table 0

.io input name="mfcc" dtype=int8 layout=nhwc shape=1x26x49x1 scale=0.0478000008 zero_point=-3 mem=main addr=0	; io 0
.io host name="logits" dtype=int8 layout=any shape=1x12 scale=0.125 zero_point=3 mem=main addr=4095	; io 1
.io output name="probs" dtype=float32 layout=any shape=1x12 scale=0 zero_point=0 mem=host addr=0	; io 2

.hostop kind="Softmax" name="Softmax_7" in=1 out=2 iparam=1 fparam=0.5,-1.25	; hostop 0

.section weights	; 29568 bytes
.hex d3a7d60dc23ecdaf20af69962652657e ; word 0
.hex e6bb44d09f5a5b7daab9da5e96026405 ; word 1
.hex cc1f47c1b297525b27fceab1da90cd46 ; word 2
.hex d973b26a4f82af8e47af13e6098a1972 ; word 3
.hex 463eb00c3a27300f79e5b7c8027a94ac ; word 4
.hex dfdcea1759067e03947f56051ed19474 ; word 5
.hex b86ebf9463006525901bb99fdedba41a ; word 6
.hex d6cc709b9147fe373007245c9cadb630 ; word 7
.hex e47450bd484fdf73b32c86373a1553f5 ; word 8
.hex e579f577d4bf50fc8703a8ced38fccca ; word 9
.hex db7369a30d5e764bf4815fd06b2b669f ; word 10
.hex 817256e70e0783a3d00aba74a0868f62 ; word 11
.hex f6e93c24e193ec7c2f5e32e257b70c74 ; word 12
.hex 6da39ce534d091f8108ddda76d3d2512 ; word 13
.hex ddaf29d4026ef34f10e499236bf2decd ; word 14
.hex b354fa2548ec614317dd41fb30fa1ef2 ; word 15
.hex 81fcb907b68e278b0b11d986a4b2e500 ; word 16
.hex ae29d1175a46c3498025c13f69a07815 ; word 17
.hex 2361a3cc54ab0f7364bde4378966945f ; word 18
.hex 0221afe984e47649b36be67f26ae9c8a ; word 19
.hex 4dcccaee3b9b20c4269e57a02d1bc935 ; word 20
.hex 9f9a4b84ebeb2501e492e203013c5e5d ; word 21
.hex d6883df2d750bab82d437c672f79d0ce ; word 22
.hex c44b8b8bc39965a8125a954e1e030094 ; word 23
.hex e03b351ca1d729061f1b496ebbc5606d ; word 24
.hex f8477e5f494bb9f20b5c8c212f552e33 ; word 25
.hex dbe61a6a1e59a5e16c6e5fd388e09c53 ; word 26
.hex 1000621ec7788e106511fc76711f0339 ; word 27
.hex 81e77f98dd1d52f554620befda4513bf ; word 28
.hex 2e409fa095b33fae84cbcb86aeed03a1 ; word 29
.hex daf8211b7a83416edff64858800ec0ea ; word 30
.hex be30c97a15ab12f399b988c43be61f63 ; word 31
.hex 3730ec289f096cf2e309bbdfd4ee0b08 ; word 32
.hex 7854a2fcb52d39859ee76de1f9cab472 ; word 33
.hex 38fff5ab0049bda20453b593c036c54b ; word 34
.hex 638b1534ee20d1845c3a64c756f98cbc ; word 35
.hex c83581515df7081ead6835bdb5d32fe0 ; word 36
.hex ce123ce94986e68b6777ff9e4b6edb2e ; word 37
.hex 1efcfc7f81e60c7f1abbe3e3b34ef4f0 ; word 38
.hex 57815ba156816db31f3b7ecb5ebf43ae ; word 39
.hex bcd802594703765b4f9815c746c92aa1 ; word 40
.hex e5cbe29db44a4891af02ccec9f1ed020 ; word 41
.hex 71ac5abd9157dec62028ce6585075513 ; word 42
.hex b0416fd80f3a45340f2482dfad5afd62 ; word 43
.hex 58b7f6465008c84c2970baf913646465 ; word 44
.hex 368fc90c1bc41f2804d2e2b9afddad51 ; word 45
.hex d891f44b8257a3f9d55033f820d7b1ae ; word 46
.zero 28672
.hex 90979ea5acb3bac1c8cfd6dde4ebf2f9 ; word 1839
.hex 00070e151c232a31383f464d545b6269 ; word 1840
.hex 70777e858c939aa1a8afb6bdc4cbd2d9 ; word 1841
.hex e0e7eef5fc030a11181f262d343b4249 ; word 1842
.hex 50575e656c737a81888f969da4abb2b9 ; word 1843
.hex c0c7ced5dce3eaf1f8ff060d141b2229 ; word 1844
.hex 30373e454c535a61686f767d848b9299 ; word 1845
.hex a0a7aeb5bcc3cad1d8dfe6edf4fb0209 ; word 1846
.hex 10171e252c333a41484f565d646b7279 ; word 1847

.section dtcm_init	; 70 bytes
.hex fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 ; word 0
.hex efeeedecebeae9e8e7e6e5e4e3e2e1e0 ; word 1
.hex dfdedddcdbdad9d8d7d6d5d4d3d2d1d0 ; word 2
.hex cfcecdcccbcac9c8c7c6c5c4c3c2c1c0 ; word 3
.hex bfbebdbcbbba                     ; word 4

.section skip_init	; 32 bytes
.hex fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0 ; word 0
.hex efeeedecebeae9e8e7e6e5e4e3e2e1e0 ; word 1

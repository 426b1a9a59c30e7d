end
.io input name=x dtype=int8 shape=1x1x1x1x1x1x1x1x1 mem=main addr=0

.format 1.0
.arch easynpu
end
.frobnicate

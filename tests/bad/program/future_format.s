.format 4.0
.arch easynpu
end

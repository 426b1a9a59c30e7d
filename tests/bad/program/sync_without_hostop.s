.format 1.0
.arch easynpu
sync
end
